import { mkdir, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inspectModelStore } from '../../tests/modelserver/inspectModelStore.js'
import { loadOpenApiDocument } from '../shared/http/index.js'
import { createCapturingLogger } from '../../tests/support/createCapturingLogger.js'
import { modelServerSpecPath } from './app.js'
import { createEngine } from './engine/createEngine.js'
import type { Engine } from './engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'

/**
 * Simultaneous create, copy, delete, pull and push — on one name and on several — through HTTP.
 * `b` is the server under test; `a` is the registry it pulls from and pushes to (names `127.0.0.1:<a>/library/…`).
 */
let engine: Engine
let a: TestModelServer
let b: TestModelServer
const document = loadOpenApiDocument(modelServerSpecPath) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }

type Kind = 'create' | 'copy' | 'copyName' | 'delete' | 'pull' | 'push'
type Write = { kind: Kind; path: string; method: 'POST' | 'DELETE'; body: Record<string, unknown>; expected: number[] }
type Outcome = Write & { status: number; text: string }

/** What each write may answer while others change the same names: never a 5xx. */
function write(kind: Kind, name: string, i: number, other: string): Write {
  switch (kind) {
    case 'create':
      return { kind, path: '/api/create', method: 'POST', body: { model: name, from: 'svc-tiny-chat', system: `variant ${i}`, stream: false }, expected: [200] }
    case 'copy':
      return { kind, path: '/api/copy', method: 'POST', body: { source: 'svc-tiny-chat', destination: name }, expected: [200] }
    case 'copyName':
      return { kind, path: '/api/copy', method: 'POST', body: { source: other, destination: name }, expected: [200, 404] }
    case 'delete':
      return { kind, path: '/api/delete', method: 'DELETE', body: { model: name }, expected: [200, 404] }
    case 'pull':
      return { kind, path: '/api/pull', method: 'POST', body: { model: name, insecure: true, stream: false }, expected: [200] }
    case 'push':
      return { kind, path: '/api/push', method: 'POST', body: { model: name, insecure: true, stream: false }, expected: [200, 404] }
  }
}

async function send(server: TestModelServer, w: Write): Promise<Outcome> {
  const res = await fetch(`${server.url}${w.path}`, { method: w.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(w.body) })
  return { ...w, status: res.status, text: await res.text() }
}

function documentedStatuses(p: string, method: string): number[] {
  return Object.keys(document.paths[p]![method.toLowerCase()]!.responses).map(Number)
}

/** Fires every write at once, then checks each answer and both stores. */
async function fire(writes: Write[]): Promise<Outcome[]> {
  const outcomes = await Promise.all(writes.map((w) => send(b, w)))
  for (const o of outcomes) {
    const context = `${o.kind} ${JSON.stringify(o.body)} → ${o.status} ${o.text}`
    expect(documentedStatuses(o.path, o.method), context).toContain(o.status)
    expect(o.expected, context).toContain(o.status)
    if (o.status === 404) expect(JSON.parse(o.text), context).toEqual({ error: expect.stringMatching(/^model '.+' not found$/) })
    for (const dir of [b.server.ctx.config.modelsDir, os.tmpdir()]) expect(o.text, context).not.toContain(dir)
  }
  for (const server of [a, b]) {
    const report = await inspectModelStore(server.server.ctx.config.modelsDir)
    expect(report.problems).toEqual([])
    expect(report.temporaryFiles).toEqual([])
    expect(server.server.ctx.store.activity).toEqual({ names: 0, pins: 0 })
    expect(server.mismatches).toEqual([])
  }
  // Every model the server lists can be described (its manifest and layers are all there).
  const { models } = (await (await fetch(`${b.url}/api/tags`)).json()) as { models: Array<{ name: string }> }
  for (const m of models) {
    const show = await fetch(`${b.url}/api/show`, { method: 'POST', body: JSON.stringify({ model: m.name }), headers: { 'content-type': 'application/json' } })
    expect(show.status, m.name).toBe(200)
    await show.text()
  }
  return outcomes
}

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  a = await startTestModelServer({ engine })
  b = await startTestModelServer({ engine, config: { registries: [`127.0.0.1:${a.port}`] } })
  // The registry has every name the writes pull, each with a layer of its own.
  for (const model of ['race', 'race-0', 'race-1', 'race-2', 'race-3', 'race-4']) {
    const res = await fetch(`${a.url}/api/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, from: 'svc-tiny-chat', system: `registry copy of ${model}`, stream: false }),
    })
    expect(res.status).toBe(200)
  }
})

afterAll(async () => {
  await b?.close()
  await a?.close()
  await engine?.dispose()
})

const kinds: Kind[] = ['create', 'copy', 'delete', 'pull', 'push']

describe('model store under simultaneous writes (HTTP)', () => {
  it('50 mixed writes on one name: documented statuses only, no 5xx, a consistent store, no temporary file left', async () => {
    const name = `127.0.0.1:${a.port}/library/race:latest`
    const writes = Array.from({ length: 50 }, (_, i) => write(kinds[i % kinds.length]!, name, i, name))
    const outcomes = await fire(writes)
    // Every kind ran, and each succeeded at least once.
    for (const kind of kinds) expect(outcomes.some((o) => o.kind === kind && o.status === 200), kind).toBe(true)
  }, 120_000)

  it('50 mixed writes over five names (copies between them too): documented statuses only, a consistent store', async () => {
    const names = [0, 1, 2, 3, 4].map((k) => `127.0.0.1:${a.port}/library/race-${k}:latest`)
    const mixed: Kind[] = ['create', 'copyName', 'delete', 'pull', 'push', 'copy', 'delete', 'pull', 'create', 'copyName']
    const writes = Array.from({ length: 50 }, (_, i) => write(mixed[i % mixed.length]!, names[(i * 7) % 5]!, i, names[(i * 3 + 1) % 5]!))
    await fire(writes)
  }, 120_000)
})

describe('unexpected failures reveal no server path', () => {
  it('a file-system error answers 500 "internal error" (JSON, NDJSON line, OCI body); the details reach the log only', async () => {
    const captured = createCapturingLogger({ name: 'modelserver' })
    const c = await startTestModelServer({ engine, logger: captured.logger, config: { registries: [`127.0.0.1:${a.port}`] } })
    try {
      const modelsDir = c.server.ctx.config.modelsDir
      // A directory where the manifests of `blocked:latest` and of the pulled name must go: renaming onto it fails.
      const pulled = `127.0.0.1:${a.port}/library/race-0:latest`
      for (const rel of ['registry.ollama.ai/library/blocked/latest', `127.0.0.1:${a.port}/library/race-0/latest`]) {
        await mkdir(path.join(modelsDir, 'manifests', rel), { recursive: true })
        await writeFile(path.join(modelsDir, 'manifests', rel, 'keep'), 'x')
      }
      const post = (p: string, body: unknown) =>
        fetch(`${c.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

      const copy = await post('/api/copy', { source: 'svc-tiny-chat', destination: 'blocked' })
      expect(copy.status).toBe(500)
      expect(await copy.json()).toEqual({ error: 'internal error' })
      const create = await post('/api/create', { model: 'blocked', from: 'svc-tiny-chat', stream: false })
      expect(create.status).toBe(500)
      expect(await create.json()).toEqual({ error: 'internal error' })

      const streamed = await post('/api/pull', { model: pulled, insecure: true })
      expect(streamed.status).toBe(200)
      const lines = (await streamed.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(lines.at(-1)).toEqual({ error: 'internal error' })

      const own = await (await fetch(`${c.url}/v2/library/svc-tiny-chat/manifests/latest`)).text()
      const put = await fetch(`${c.url}/v2/library/blocked/manifests/latest`, {
        method: 'PUT',
        headers: { 'content-type': 'application/vnd.docker.distribution.manifest.v2+json' },
        body: own,
      })
      expect(put.status).toBe(500)
      expect(await put.json()).toEqual({ errors: [{ code: 'UNKNOWN', message: 'internal error', detail: {} }] })

      // The log has what happened, with the path; no client saw it.
      const log = captured.text()
      expect(log).toContain(path.join(modelsDir, 'manifests'))
      expect(c.mismatches).toEqual([])
      const report = await inspectModelStore(modelsDir)
      expect(report.temporaryFiles).toEqual([])
    } finally {
      await c.close()
    }
  }, 60_000)
})
