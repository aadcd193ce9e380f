/**
 * Machines 3.1 (residency) and 3.2 (pull progress), every row, replayed against live model servers.
 * By default two local instances are started (b pulls from a). To target another server — a real Ollama —
 * set CONFORMANCE_MODELSERVER_URL (and CONFORMANCE_MODEL, CONFORMANCE_PULL_MODEL: a model it can pull).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../../src/modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../src/modelserver/testServer.js'
import { loadMachine, replayPull, replayResidency, type PullMachine, type ResidencyMachine } from './replay.js'

const external = process.env.CONFORMANCE_MODELSERVER_URL
let engine: Engine | undefined
let a: TestModelServer | undefined
let b: TestModelServer | undefined
let url: string
let pullModel: string

beforeAll(async () => {
  if (external) {
    url = external.replace(/\/+$/, '')
    pullModel = process.env.CONFORMANCE_PULL_MODEL ?? 'all-minilm'
    return
  }
  engine = await createEngine({ threads: 1 })
  a = await startTestModelServer({ engine })
  b = await startTestModelServer({ engine, config: { installDefaults: true } })
  url = b.url
  pullModel = `127.0.0.1:${a.port}/library/svc-tiny-chat:latest`
})

afterAll(async () => {
  await b?.close()
  await a?.close()
  await engine?.dispose()
})

describe('machine 3.1 — model residency', () => {
  it('every row holds', async () => {
    const machine = loadMachine<ResidencyMachine>('residency.yaml')
    const results = await replayResidency(url, machine, process.env.CONFORMANCE_MODEL ? { model: process.env.CONFORMANCE_MODEL } : {})
    expect(results.map((r) => r.id)).toEqual(machine.rows.map((r) => r.id))
    expect(results.filter((r) => !r.ok)).toEqual([])
  }, 60_000)
})

describe('the pull replayer is not vacuous', () => {
  it('reports a status out of order and a missing one', async () => {
    const { createServer } = await import('node:http')
    const lines = [{ status: 'pulling manifest' }, { status: 'verifying sha256 digest' }, { status: 'downloading sha256:' + 'a'.repeat(64), digest: 'x', total: 1, completed: 1 }, { status: 'success' }]
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' })
      res.end(lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as { port: number }).port
    try {
      const results = await replayPull(`http://127.0.0.1:${port}`, loadMachine<PullMachine>('pullProgress.yaml'))
      expect(results.filter((r) => !r.ok).map((r) => r.id)).toEqual(['3.2-4', '3.2-5'])
      expect(results.at(-1)!.problems.join(' ')).toMatch(/out of order/)
    } finally {
      server.close()
    }
  })
})

describe('machine 3.2 — pull progress', () => {
  it('every status appears, in order', async () => {
    const machine = loadMachine<PullMachine>('pullProgress.yaml')
    const results = await replayPull(url, machine, { pullModel })
    expect(results).toHaveLength(5)
    expect(results.filter((r) => !r.ok)).toEqual([])
  }, 120_000)

  it('the pulled model then generates', async () => {
    const res = await fetch(`${url}/api/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: pullModel, prompt: 'hi', stream: false, options: { num_predict: 2 } }),
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { done: boolean }).done).toBe(true)
  })

  it('all local responses matched openapi/modelserver.yaml', () => {
    expect([...(a?.mismatches ?? []), ...(b?.mismatches ?? [])]).toEqual([])
  })
})
