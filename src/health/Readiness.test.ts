import { describe, expect, it } from 'vitest'
import { CapabilityMonitor } from './CapabilityMonitor.js'
import { parseReadinessRequirement } from './parseReadinessRequirement.js'
import { Readiness } from './Readiness.js'

async function readinessWith(results: Record<string, boolean | undefined>) {
  const monitor = new CapabilityMonitor({
    capabilities: Object.entries(results).map(([name, ok]) => ({
      name,
      check:
        ok === undefined
          ? undefined
          : async () => {
              if (!ok) throw new Error('down')
            },
    })),
    intervalMs: 1000,
    timeoutMs: 100,
    failuresBeforeDown: 1,
  })
  const readiness = new Readiness()
  readiness.watch(monitor)
  return { readiness, monitor }
}

describe('Readiness', () => {
  it('is ready once started with every configured capability up; a capability that is not configured never holds it back', async () => {
    const { readiness, monitor } = await readinessWith({ database: true, modelserver: true, storage: undefined })
    await monitor.checkAll()
    expect(readiness.report()).toEqual({ status: 'starting', capabilities: { database: 'up', modelserver: 'up', storage: 'not_configured' } })
    readiness.started()
    expect(readiness.report()).toEqual({ status: 'ready', capabilities: { database: 'up', modelserver: 'up', storage: 'not_configured' } })
  })

  it('is not ready while a configured capability is down or not checked yet, unless the probe requires less', async () => {
    const { readiness, monitor } = await readinessWith({ database: true, modelserver: false })
    readiness.started()
    expect(readiness.report().status).toBe('not_ready') // nothing checked yet
    await monitor.checkAll()
    expect(readiness.report()).toEqual({ status: 'not_ready', capabilities: { database: 'up', modelserver: 'down' } })
    expect(readiness.report('none').status).toBe('ready')
    expect(readiness.report(['database']).status).toBe('ready')
    expect(readiness.report(['database', 'modelserver']).status).toBe('not_ready')
  })

  it('draining wins over everything, also for a probe that requires nothing', async () => {
    const { readiness, monitor } = await readinessWith({ database: true })
    await monitor.checkAll()
    readiness.started()
    readiness.drain()
    expect(readiness.report('none').status).toBe('draining')
    readiness.started() // a drained replica never comes back
    expect(readiness.report().status).toBe('draining')
  })
})

describe('parseReadinessRequirement', () => {
  const known = ['database', 'modelserver', 'storage']
  it('reads all (the default), none, or known names; an unknown name is returned as such, never ignored', () => {
    expect(parseReadinessRequirement(undefined, known)).toBe('all')
    expect(parseReadinessRequirement('all', known)).toBe('all')
    expect(parseReadinessRequirement('none', known)).toBe('none')
    expect(parseReadinessRequirement('database,storage', known)).toEqual(['database', 'storage'])
    expect(parseReadinessRequirement('database,modelservr', known)).toEqual({ unknown: ['modelservr'] })
  })
})
