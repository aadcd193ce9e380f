import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ModelServerUnavailableError } from './ModelServerClient.js'
import { canonicalModelName, ModelServerPool } from './ModelServerPool.js'

// The routing rules on small peers that speak the model server's protocol (the same rules
// against real model servers: tests/llm/modelServerPool.integration.test.ts).

type Peer = { url: string; models: string[]; generated: string[]; server: Server; close(): Promise<void> }
const peers: Peer[] = []

/** A model-server stand-in: `/api/tags` lists `models`; `/api/generate` streams `n` chunks, one every `gapMs`. */
async function peer(models: string[], gapMs = 5): Promise<Peer> {
  const generated: string[] = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (d: Buffer) => (raw += d.toString()))
    req.on('end', () => {
      if (req.url === '/api/tags') {
        const list = p.models.map((name) => ({ name, model: name, modified_at: '2026-11-22T11:58:00Z', size: 1, digest: 'ab' }))
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ models: list }))
      }
      const body = JSON.parse(raw || '{}') as { model?: string }
      const model = canonicalModelName(body.model ?? '')
      if (!p.models.includes(model)) return void res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `model '${body.model}' not found` }))
      generated.push(model)
      res.writeHead(200, { 'content-type': 'application/x-ndjson' })
      let sent = 0
      const tick = setInterval(() => {
        const at = new Date().toISOString()
        if (++sent < 4) return void res.write(`${JSON.stringify({ model: body.model, created_at: at, response: 'a', done: false })}\n`)
        clearInterval(tick)
        res.end(`${JSON.stringify({ model: body.model, created_at: at, response: '', done: true, done_reason: 'stop', eval_count: 3 })}\n`)
      }, gapMs)
      res.on('close', () => clearInterval(tick))
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const p: Peer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    models,
    generated,
    server,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
  peers.push(p)
  return p
}

/** A URL where nothing listens (a closed port). */
async function deadUrl(): Promise<string> {
  const p = await peer([])
  await p.close()
  return p.url
}

afterEach(async () => {
  for (const p of peers.splice(0)) if (p.server.listening) await p.close()
})

const pool = (baseUrls: string[]) => new ModelServerPool({ baseUrls, timeoutMs: 2000, refreshMs: 60_000 })

describe('ModelServerPool', () => {
  it('spreads calls of an idle pool over the servers that have the model, and prefers the least busy', async () => {
    const [a, b] = [await peer(['m:latest']), await peer(['m:latest'])]
    const p = pool([a.url, b.url])
    for (let i = 0; i < 4; i++) await p.generate({ model: 'm', prompt: 'x' })
    expect([a.generated.length, b.generated.length]).toEqual([2, 2])
    await Promise.all(Array.from({ length: 6 }, () => p.generate({ model: 'm:latest', prompt: 'x' })))
    expect([a.generated.length, b.generated.length]).toEqual([5, 5])
    // A stream held open on one server: the next calls all go to the other.
    const held = await p.generateStreamRaw({ model: 'm', prompt: 'x' })
    const busy = p.servers().findIndex((s) => s.in_flight === 1)
    for (let i = 0; i < 3; i++) await p.generate({ model: 'm', prompt: 'x' })
    expect([a.generated.length, b.generated.length][1 - busy]).toBe(8)
    held.cancel()
    expect(p.servers().map((s) => s.in_flight)).toEqual([0, 0])
  })

  it('routes a model present on one server only to that server; a model on none is the server\'s own 404', async () => {
    const [a, b] = [await peer(['m:latest']), await peer(['m:latest', 'only-b:latest'])]
    const p = pool([a.url, b.url])
    for (let i = 0; i < 3; i++) await p.generate({ model: 'only-b', prompt: 'x' })
    expect(b.generated.filter((m) => m === 'only-b:latest')).toHaveLength(3)
    await expect(p.generate({ model: 'nowhere:latest', prompt: 'x' })).rejects.toMatchObject({ code: 'model_not_found' })
  })

  it('reads the model lists again on a miss (a model installed after start)', async () => {
    const [a, b] = [await peer(['m:latest']), await peer(['m:latest'])]
    const p = pool([a.url, b.url])
    await p.refresh()
    b.models.push('new:latest')
    await new Promise((r) => setTimeout(r, 1100)) // lists are re-read on a miss at most once a second
    await p.generate({ model: 'new:latest', prompt: 'x' })
    expect(b.generated).toEqual(['new:latest'])
    expect(p.servers()[1]!.models).toContain('new:latest')
  })

  it('re-reads the model lists every refreshMs once started, and not after stop', async () => {
    const [a, b] = [await peer(['m:latest']), await peer(['m:latest'])]
    const p = new ModelServerPool({ baseUrls: [a.url, b.url], timeoutMs: 2000, refreshMs: 100 })
    p.start()
    try {
      a.models.push('later:latest')
      for (let i = 0; i < 50 && !p.servers()[0]!.models?.includes('later:latest'); i++) await new Promise((r) => setTimeout(r, 50))
      expect(p.servers()[0]!.models).toEqual(['later:latest', 'm:latest'])
    } finally {
      p.stop()
    }
    b.models.push('never-seen:latest')
    await new Promise((r) => setTimeout(r, 300))
    expect(p.servers()[1]!.models).toEqual(['m:latest'])
  })

  it('fails over on a connection error before the first byte, marks the server down and reports why', async () => {
    const [gone, live] = [await peer(['m:latest']), await peer(['m:latest'])]
    const dead = gone.url
    const p = pool([dead, live.url])
    await p.refresh() // both known up with the model; then one stops
    await gone.close()
    for (let i = 0; i < 3; i++) expect((await p.generate({ model: 'm', prompt: 'x' })).response).toBe('aaa')
    expect(live.generated).toHaveLength(3)
    const [down, up] = p.servers()
    expect(down).toMatchObject({ url: dead, status: 'down', in_flight: 0, last_error: expect.stringMatching(/POST \/api\/generate: ECONNREFUSED/) })
    expect(up).toMatchObject({ url: live.url, status: 'up', models: ['m:latest'], in_flight: 0, last_error: null })
    expect(await p.check()).toMatchObject({ status: 'partial', detail: expect.stringContaining(dead) })
    const metrics = await p.registry.metrics()
    expect(metrics).toContain(`gateway_modelserver_up{server="${dead}"} 0`)
    expect(metrics).toContain(`gateway_modelserver_up{server="${live.url}"} 1`)
  })

  it('never retries a stream that has started: the server going away mid-stream is the caller\'s error', async () => {
    const [a, b] = [await peer(['m:latest'], 200), await peer(['m:latest'], 200)]
    const p = pool([a.url, b.url])
    await p.refresh()
    const stream = await p.generateStream({ model: 'm', prompt: 'x' })
    const first = await stream.next()
    expect(first.done).toBe(false)
    const [serving, other] = a.generated.length === 1 ? [a, b] : [b, a]
    expect(p.servers().reduce((n, s) => n + s.in_flight, 0)).toBe(1)
    await serving.close()
    await expect(stream.next()).rejects.toBeInstanceOf(ModelServerUnavailableError)
    expect(other.generated).toHaveLength(0)
    expect(p.servers().map((s) => s.in_flight)).toEqual([0, 0])
  })

  it('releases a server when a stream is closed before its first chunk', async () => {
    const a = await peer(['m:latest'])
    const b = await peer(['m:latest'])
    const p = pool([a.url, b.url])
    const upstream = await p.generateStreamRaw({ model: 'm', prompt: 'x' })
    expect(p.servers().reduce((n, s) => n + s.in_flight, 0)).toBe(1)
    await upstream.bytes.return(undefined)
    expect(p.servers().map((s) => s.in_flight)).toEqual([0, 0])
  })

  it('all servers down: modelserver_unavailable naming each server and its error', async () => {
    const [x, y] = [await deadUrl(), await deadUrl()]
    const p = pool([x, y])
    const error = await p.generate({ model: 'm', prompt: 'x' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ModelServerUnavailableError)
    expect((error as ModelServerUnavailableError).code).toBe('modelserver_unavailable')
    expect((error as ModelServerUnavailableError).shortMessage).toMatch(new RegExp(`^no model server could take POST /api/generate for m .*${x}.*ECONNREFUSED.*${y}.*ECONNREFUSED`))
    expect((await p.check()).status).toBe('down')
  })

  it('with one server, behaves as the plain client: no model-list reads, its own error', async () => {
    const a = await peer(['m:latest'])
    const p = pool([a.url])
    await p.generate({ model: 'm:latest', prompt: 'x' })
    expect(p.servers()[0]!.models).toBeNull()
    const dead = pool([await deadUrl()])
    await expect(dead.generate({ model: 'm', prompt: 'x' })).rejects.toMatchObject({ code: 'modelserver_unavailable', shortMessage: expect.stringMatching(/^model server at .* POST \/api\/generate: ECONNREFUSED/) })
  })
})
