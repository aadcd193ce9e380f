import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ModelServerClient, ModelServerUnavailableError } from './ModelServerClient.js'

// The timeout bounds each wait (answer, first chunk, each next chunk), not the whole
// generation. The peer speaks the model server's NDJSON protocol at a chosen pace: a steady slow producer
// (whole answer ≫ timeout, every gap ≪ timeout) and one that stalls after its first chunk.

const TIMEOUT_MS = 600
const GAP_MS = 60
const CHUNKS = 25 // 1.5 s in all: 2.5 timeouts

let server: Server
let url: string

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume()
    const at = () => new Date().toISOString()
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    if (req.url === '/api/generate') {
      let sent = 0
      const tick = setInterval(() => {
        sent++
        if (sent < CHUNKS) return void res.write(`${JSON.stringify({ model: 'm', created_at: at(), response: 'a', done: false })}\n`)
        clearInterval(tick)
        res.end(`${JSON.stringify({ model: 'm', created_at: at(), response: '', done: true, done_reason: 'stop', eval_count: CHUNKS - 1 })}\n`)
      }, GAP_MS)
      res.on('close', () => clearInterval(tick))
    } else {
      // /api/chat: one chunk, then nothing.
      res.write(`${JSON.stringify({ model: 'm', created_at: at(), message: { role: 'assistant', content: 'a' }, done: false })}\n`)
    }
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
})

describe('ModelServerClient timeouts', () => {
  it('a generation longer than the timeout that keeps producing completes (non-streamed call, read as a stream)', async () => {
    const client = new ModelServerClient({ baseUrl: url, timeoutMs: TIMEOUT_MS })
    const reply = await client.generate({ model: 'm', prompt: 'x' })
    expect(reply.response).toBe('a'.repeat(CHUNKS - 1))
    expect(reply.done).toBe(true)
  })

  it('a model server that stalls after the first chunk is given up with modelserver_unavailable', async () => {
    const client = new ModelServerClient({ baseUrl: url, timeoutMs: TIMEOUT_MS })
    const stream = await client.chatStream({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
    const first = await stream.next()
    expect(first.value?.[0]?.message.content).toBe('a')
    const error = await stream.next().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ModelServerUnavailableError)
    expect((error as Error).message).toMatch(/no data within 600 ms/)
  })

  it('a model server that is down is modelserver_unavailable naming the address', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer().listen(0, '127.0.0.1')
    await once(probe, 'listening')
    const port = (probe.address() as AddressInfo).port
    await new Promise((r) => probe.close(r))
    const client = new ModelServerClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: TIMEOUT_MS })
    const error = await client.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ModelServerUnavailableError)
    expect((error as Error).message).toBe(`model server at http://127.0.0.1:${port} POST /api/chat: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:${port})`)
  })
})

describe('ModelServerClient addressing', () => {
  it('reaches a model server behind a path prefix and over IPv6 (the base URL is parsed once, as node:http would)', async () => {
    const seen: string[] = []
    const peer = createServer((req, res) => {
      seen.push(`${req.socket.localAddress} ${req.url}`)
      req.resume()
      res.writeHead(200, { 'content-type': 'application/x-ndjson' })
      res.end(`${JSON.stringify({ model: 'm', created_at: new Date().toISOString(), response: 'ok', done: true })}\n`)
    })
    peer.listen(0, '::1')
    await once(peer, 'listening')
    try {
      const port = (peer.address() as AddressInfo).port
      for (const baseUrl of [`http://[::1]:${port}/ollama`, `http://[::1]:${port}/ollama/`]) {
        const reply = await new ModelServerClient({ baseUrl, timeoutMs: TIMEOUT_MS }).generate({ model: 'm', prompt: 'x' })
        expect(reply.response).toBe('ok')
      }
      expect(seen).toEqual(['::1 /ollama/api/generate', '::1 /ollama/api/generate'])
    } finally {
      peer.closeAllConnections()
      await new Promise((r) => peer.close(r))
    }
  })
})
