/**
 * Machines 3.1 (residency, driver `http`) and 3.2 (pull progress, driver `pull-progress`), every row, replayed
 * by the conformance runner against live model servers; every response is checked against
 * openapi/modelserver.yaml. By default a local instance is started and pulls from the devnet's model registry
 * (devnet/registry/, the machine's default `pullModel` on the registry's `host:port`). To target another
 * server — a real Ollama — set CONFORMANCE_MODELSERVER_URL, CONFORMANCE_MODEL (a model it has) and
 * CONFORMANCE_PULL_MODEL (one it can pull), or use `npm run conformance -- --modelserver <url> --var …`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../../src/modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'
import { type RegistryPeer, startRegistry } from '../../../devnet/registry/startRegistry.js'
import { DEFAULT_PORTS } from '../../../devnet/ports.js'
import { formatText } from '../../report.js'
import { loadMachine, runMachine } from '../../runner.js'
import type { Target } from '../../types.js'

const target = (base: string, vars: Record<string, string>): Target => ({ urls: { modelserver: base }, keys: {}, hooks: {}, vars })
const external = process.env.CONFORMANCE_MODELSERVER_URL
let engine: Engine | undefined
let registry: RegistryPeer | undefined
let b: TestModelServer | undefined
let url: string
let model: string
let pullVars: Record<string, string>

beforeAll(async () => {
  if (external) {
    url = external.replace(/\/+$/, '')
    model = process.env.CONFORMANCE_MODEL ?? 'llama3.2:1b'
    pullVars = { pullModel: process.env.CONFORMANCE_PULL_MODEL ?? 'all-minilm' }
    return
  }
  engine = await createEngine({ threads: 1 })
  registry = await startRegistry()
  // b pulls from the registry, so it must be one of b's allow-listed registries (MODELSERVER_REGISTRIES).
  b = await startTestModelServer({ engine, config: { registries: ['registry.ollama.ai', registry.host] } })
  url = b.url
  model = 'svc-tiny-chat:latest'
  pullVars = { registry: registry.host }
})

afterAll(async () => {
  await b?.close()
  await registry?.close()
  await engine?.dispose()
})

type PsModel = { name: string; expires_at: string }
const ps = async () => ((await (await fetch(`${url}/api/ps`)).json()) as { models: PsModel[] }).models
const post = (p: string, body: unknown) =>
  fetch(`${url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json())

describe('machine 3.1 — model residency', () => {
  it('every transition holds, in order (conformance/runner.ts)', async () => {
    const results = await runMachine(loadMachine('model-residency'), target(url, { model }))
    expect(results.filter((r) => r.outcome !== 'passed'), formatText(results)).toEqual([])
    const seedRows = new Set(results.map((r) => r.id.match(/^3\.1-(\d)/)?.[1]).filter(Boolean))
    expect([...seedRows].sort()).toEqual(['1', '2', '3', '4', '5', '6'])
  }, 60_000)

  it('expires_at follows keep_alive: default 5m, a duration, seconds, -1 forever', async () => {
    const expiresIn = async () => (new Date((await ps()).find((m) => m.name === model)!.expires_at).getTime() - Date.now()) / 1000
    await post('/api/generate', { model, keep_alive: 0 })
    await post('/api/generate', { model, prompt: 'hi', stream: false, options: { num_predict: 1 } })
    expect(await expiresIn()).toBeGreaterThan(290)
    expect(await expiresIn()).toBeLessThanOrEqual(300)
    await post('/api/generate', { model, keep_alive: '10m' })
    expect(Math.round(await expiresIn())).toBeGreaterThanOrEqual(595)
    await post('/api/chat', { model, keep_alive: 3600 })
    expect(Math.round(await expiresIn())).toBeGreaterThanOrEqual(3595)
    await post('/api/chat', { model, keep_alive: -1 })
    expect(await expiresIn()).toBeGreaterThan(100 * 365 * 24 * 3600)
  })
})

describe('the LLM surfaces (responses, messages, status, enforced tool_choice)', () => {
  it('every row holds (conformance/runner.ts)', async () => {
    const results = await runMachine(loadMachine('model-surfaces'), target(url, { model }))
    expect(results.filter((r) => r.outcome !== 'passed'), formatText(results)).toEqual([])
  }, 180_000)
})

describe('the pull-progress driver is not vacuous', () => {
  it('reports a status out of order and a missing one', async () => {
    const { createServer } = await import('node:http')
    const lines = [
      { status: 'pulling manifest' },
      { status: 'verifying sha256 digest' },
      { status: `downloading sha256:${'a'.repeat(64)}`, digest: 'x', total: 1, completed: 1 },
      { status: 'success' },
    ]
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' })
      res.end(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    const port = (server.address() as { port: number }).port
    try {
      const results = await runMachine(loadMachine('pull-progress'), target(`http://127.0.0.1:${port}`, {}))
      expect(results.filter((r) => r.outcome === 'failed').map((r) => r.id)).toEqual(['3.2-2', '3.2-4'])
      expect(results[1]!.problems.join(' ')).toMatch(/out of order/)
      expect(results[3]!.problems.join(' ')).toMatch(/never seen/)
    } finally {
      server.close()
    }
  })
})

describe('machine 3.2 — pull progress', () => {
  it("pulls by default from the devnet registry on npm start's port, which npm start allow-lists", () => {
    expect(loadMachine('pull-progress').vars).toMatchObject({ registry: `127.0.0.1:${DEFAULT_PORTS.registry}`, pullModel: '{{registry}}/library/tiny-chat:latest' })
  })

  it('every status appears, in order', async () => {
    const results = await runMachine(loadMachine('pull-progress'), target(url, pullVars))
    expect(results).toHaveLength(5)
    expect(results.filter((r) => r.outcome !== 'passed'), formatText(results)).toEqual([])
  }, 120_000)

  it('the pulled model then generates', async () => {
    const pullModel = pullVars.pullModel ?? `${pullVars.registry}/library/tiny-chat:latest`
    const res = (await post('/api/generate', { model: pullModel, prompt: 'hi', stream: false, options: { num_predict: 2 } })) as { done: boolean }
    expect(res.done).toBe(true)
  })

  it('all local responses matched openapi/modelserver.yaml', () => {
    expect(b?.mismatches ?? []).toEqual([])
  })
})
