import { describe, expect, it } from 'vitest'
import { type CapabilityState, CapabilityMonitor } from './CapabilityMonitor.js'

/** A capability whose next checks pass or fail as the test says; counts how often it was checked. */
function switchable() {
  const s = { ok: true, hang: false, calls: 0 }
  const check = async () => {
    s.calls++
    if (s.hang) return new Promise(() => undefined)
    if (!s.ok) throw new Error('connect ECONNREFUSED 127.0.0.1:9')
  }
  return Object.assign(s, { check })
}

const statusOf = (m: CapabilityMonitor, name: string) => m.states().get(name)!.status

describe('CapabilityMonitor', () => {
  it('reports a capability without a check as not configured and never calls anything for it', async () => {
    const m = new CapabilityMonitor({ capabilities: [{ name: 'storage' }], intervalMs: 1000, timeoutMs: 100 })
    await m.checkAll()
    expect(m.states()).toEqual(new Map([['storage', { status: 'not_configured' }]]))
  })

  it('is unknown until checked, up after one pass, and down only after two failures in a row (one slow answer is not an outage)', async () => {
    const db = switchable()
    const changes: [string, CapabilityState['status'], string][] = []
    const m = new CapabilityMonitor({ capabilities: [{ name: 'database', check: db.check }], intervalMs: 1000, timeoutMs: 100, onChange: (n, s, p) => changes.push([n, s.status, p]) })
    expect(statusOf(m, 'database')).toBe('unknown')
    await m.checkAll()
    expect(statusOf(m, 'database')).toBe('up')
    db.ok = false
    await m.checkAll()
    expect(statusOf(m, 'database')).toBe('up')
    await m.checkAll()
    expect(m.states().get('database')).toEqual({ status: 'down', detail: 'connect ECONNREFUSED 127.0.0.1:9' })
    db.ok = true
    await m.checkAll()
    expect(statusOf(m, 'database')).toBe('up')
    expect(changes).toEqual([
      ['database', 'up', 'unknown'],
      ['database', 'down', 'up'],
      ['database', 'up', 'down'],
    ])
  })

  it('a check that never answers fails at the timeout; a round while it still runs does not start it twice', async () => {
    const ms = switchable()
    ms.hang = true
    const m = new CapabilityMonitor({ capabilities: [{ name: 'modelserver', check: ms.check }], intervalMs: 1000, timeoutMs: 30, failuresBeforeDown: 1 })
    const started = performance.now()
    await Promise.all([m.checkAll(), m.checkAll()])
    expect(ms.calls).toBe(1)
    expect(performance.now() - started).toBeLessThan(5_000) // a 30 ms timeout, against a check that never answers
    expect(m.states().get('modelserver')).toEqual({ status: 'down', detail: 'no answer within 30 ms' })
    // once timed out it is let go: the next round checks again
    await m.checkAll()
    expect(ms.calls).toBe(2)
  })

  it('checks every configured capability in the background until stopped', async () => {
    const a = switchable()
    const m = new CapabilityMonitor({ capabilities: [{ name: 'a', check: a.check }, { name: 'b' }], intervalMs: 20, timeoutMs: 10 })
    m.start()
    await new Promise((r) => setTimeout(r, 150))
    m.stop()
    const calls = a.calls
    expect(calls).toBeGreaterThanOrEqual(3)
    await new Promise((r) => setTimeout(r, 60))
    expect(a.calls).toBe(calls)
    expect(m.names).toEqual(['a', 'b'])
  })
})
