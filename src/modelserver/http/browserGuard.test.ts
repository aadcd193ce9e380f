import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../engine/createEngine.js'
import type { Engine } from '../engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'
import { ollamaAllowedOrigins } from './corsOrigins.js'

/** Browsers' view of the server, with raw requests (a browser sets Origin and Host itself; fetch cannot fake Host). */
type Reply = { status: number; headers: http.IncomingHttpHeaders; body: string }
function request(server: TestModelServer, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path, headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

let engine: Engine
let ms: TestModelServer
let open: TestModelServer

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine, config: { origins: ollamaAllowedOrigins('https://app.example.com,chrome-extension://*') } })
  open = await startTestModelServer({ engine, config: { installDefaults: false, origins: ollamaAllowedOrigins('*') } })
})

afterAll(async () => {
  await open?.close()
  await ms?.close()
  await engine?.dispose()
})

describe('CORS as Ollama (OLLAMA_ORIGINS)', () => {
  const host = () => `127.0.0.1:${ms.port}`

  it('answers an allowed origin with its CORS headers; requests without Origin are unaffected', async () => {
    const plain = await request(ms, 'GET', '/api/tags', { host: host() })
    expect(plain.status).toBe(200)
    expect(plain.headers['access-control-allow-origin']).toBeUndefined()
    for (const origin of ['http://localhost:5173', 'https://app.example.com', 'chrome-extension://abcdef', 'vscode-webview://x1']) {
      const res = await request(ms, 'GET', '/api/tags', { host: host(), origin })
      expect(res.status, origin).toBe(200)
      expect(res.headers['access-control-allow-origin']).toBe(origin)
      expect(res.headers.vary).toMatch(/Origin/)
    }
    // Its own origin is not a cross-origin request.
    const same = await request(ms, 'GET', '/api/version', { host: host(), origin: `http://${host()}` })
    expect(same.status).toBe(200)
  })

  it('answers an allowed preflight 204 with the methods, the headers the openai SDK sends and a 12 h max age', async () => {
    const res = await request(ms, 'OPTIONS', '/api/chat', {
      host: host(),
      origin: 'http://localhost:3000',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type,authorization,x-stainless-os',
    })
    expect(res.status).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('http://localhost:3000')
    expect(res.headers['access-control-allow-methods']).toBe('GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS')
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase().split(',')
    expect(allowed).toEqual(expect.arrayContaining(['content-type', 'authorization', 'x-stainless-os', 'openai-beta']))
    expect(res.headers['access-control-max-age']).toBe('43200')
  })

  it('refuses any other origin with an empty 403, also a "simple" cross-site POST that would delete a model', async () => {
    for (const [method, path] of [
      ['GET', '/api/tags'],
      ['OPTIONS', '/api/chat'],
      ['GET', '/v2/library/svc-tiny-chat/manifests/latest'],
      ['GET', '/nowhere'],
    ] as const) {
      const res = await request(ms, method, path, { host: host(), origin: 'https://evil.example' }).catch((e: Error) => {
        throw new Error(`${method} ${path}: ${e.message}`)
      })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body).toBe('')
      expect(res.headers['access-control-allow-origin']).toBeUndefined()
    }
    // A form-like POST needs no preflight; this server reads JSON whatever the Content-Type, so only the 403 stops it.
    const attack = await request(ms, 'DELETE', '/api/delete', { host: host(), origin: 'https://evil.example', 'content-type': 'text/plain' }, '{"model":"svc-tiny-chat"}').catch((e: Error) => {
      throw new Error(`attack: ${e.message}`)
    })
    expect(attack.status).toBe(403)
    const still = await request(ms, 'POST', '/api/show', { host: host(), 'content-type': 'application/json' }, '{"model":"svc-tiny-chat"}')
    expect(still.status).toBe(200)
  })

  it('with OLLAMA_ORIGINS=* any origin is allowed and answered with *', async () => {
    const res = await request(open, 'GET', '/api/version', { host: `127.0.0.1:${open.port}`, origin: 'https://anywhere.example' })
    expect(res.status).toBe(200)
    expect(res.headers['access-control-allow-origin']).toBe('*')
  })

  it('refuses a Host that does not name this machine while listening on loopback (DNS rebinding)', async () => {
    // A page on evil.example rebound to 127.0.0.1: same-origin for the browser, so only the Host tells.
    const rebound = await request(ms, 'POST', '/api/generate', { host: `evil.example:${ms.port}`, origin: `http://evil.example:${ms.port}`, 'content-type': 'text/plain' }, '{"model":"svc-tiny-chat"}')
    expect(rebound.status).toBe(403)
    expect((await request(ms, 'GET', '/api/tags', { host: `evil.example:${ms.port}` })).status).toBe(403)
    for (const name of [`localhost:${ms.port}`, `models.localhost:${ms.port}`, `box.local`, `gpu.internal:${ms.port}`, `192.168.1.20:${ms.port}`, `[::1]:${ms.port}`]) {
      expect((await request(ms, 'GET', '/api/version', { host: name })).status, name).toBe(200)
    }
  })

  it('every answer matched openapi/modelserver.yaml (403 is documented on every operation)', () => {
    expect([...ms.mismatches, ...open.mismatches]).toEqual([])
    const doc = ms.server.router.document as unknown as { paths: Record<string, Record<string, { responses?: Record<string, unknown> }>> }
    for (const [p, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        if (op && typeof op === 'object' && 'responses' in op) expect(Object.keys(op.responses ?? {}), `${method} ${p}`).toContain('403')
      }
    }
  })
})
