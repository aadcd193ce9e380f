import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../tests/support/startTestGateway.js'
import { formatResults, gatewayMachineFiles, repoRoot, runMachines } from './runner.js'

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

describe('gateway conformance machines', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway()
  })
  afterAll(async () => {
    await gw?.close()
  })

  it('every transition of the gate and login machines holds on the live gateway', async () => {
    const results = await runMachines(gatewayMachineFiles, { target: gw.url })
    expect(results.filter((r) => !r.ok), formatResults(results)).toEqual([])
    expect(results.length).toBeGreaterThanOrEqual(25)
    expect(gw.validationErrors).toEqual([])
  })
})

describe('gateway conformance machines against the Prism mock', () => {
  let prism: ChildProcess | undefined
  let url = ''
  beforeAll(async () => {
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    prism = spawn(path.join(repoRoot, 'node_modules', '.bin', 'prism'), ['mock', path.join(repoRoot, 'openapi', 'gateway.yaml'), '-p', String(port), '-h', '127.0.0.1'], {
      stdio: 'ignore',
      detached: false,
    })
    const deadline = Date.now() + 60_000
    for (;;) {
      try {
        await fetch(`${url}/login`)
        break
      } catch {
        if (Date.now() > deadline) throw new Error('Prism did not start')
        await new Promise((r) => setTimeout(r, 250))
      }
    }
  })
  afterAll(() => {
    prism?.kill('SIGTERM')
  })

  it('the unsigned, stateless transitions hold on the mock', async () => {
    const results = await runMachines(gatewayMachineFiles, { target: url, mockOnly: true })
    const ran = results.filter((r) => !r.skipped)
    expect(ran.length).toBeGreaterThanOrEqual(5)
    expect(ran.filter((r) => !r.ok), formatResults(results)).toEqual([])
  })
})
