import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { DocumentClient, documentProblems } from './DocumentClient.js'

const json = new Headers({ 'content-type': 'application/json' })
const registry404 = JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry', detail: { path: '/v2//x/manifests/y' } }] })
const ollama404 = JSON.stringify({ error: '404 page not found: GET /nope' })

describe('documentProblems for a path no operation has: the fallback bodies of the document', () => {
  it('model server: /v2 paths (also with an empty or `..` segment) answer the OCI RegistryError shape, other paths {error}', () => {
    for (const path of ['/v2//x/manifests/y', '/v2/A.8._Y1_.8./blobs/uploads/valueOf', '/v2/x/../y/z/blobs/uploads/']) {
      expect(documentProblems('modelserver', 'PUT', path, 404, json, registry404), path).toEqual([])
      expect(documentProblems('modelserver', 'PUT', path, 404, json, ollama404), path).not.toEqual([])
    }
    expect(documentProblems('modelserver', 'GET', '/nope', 404, json, ollama404)).toEqual([])
    expect(documentProblems('modelserver', 'GET', '/nope', 404, json, registry404)).not.toEqual([])
  })

  it('model server: /v1 paths answer OpenAI’s error shape; the gateway {error} everywhere', () => {
    const openai = JSON.stringify({ error: { message: '404 page not found', type: 'not_found_error', param: null, code: null } })
    expect(documentProblems('modelserver', 'GET', '/v1/nope', 404, json, openai)).toEqual([])
    expect(documentProblems('modelserver', 'GET', '/v1/nope', 404, json, ollama404)).not.toEqual([])
    expect(documentProblems('gateway', 'GET', '/v2//x', 404, json, JSON.stringify({ error: 'not_found', message: 'no such route' }))).toEqual([])
  })
})

describe('DocumentClient: a connection the server drops before answering', () => {
  /** A server that destroys the first request's connection unanswered and answers the next ones. */
  async function dropsFirst() {
    let seen = 0
    const server = createServer((req, res) => {
      if (seen++ === 0) return void req.socket.destroy()
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_request"}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close(), seen: () => seen }
  }

  it('is sent again, once, to a stateless mock', async () => {
    const s = await dropsFirst()
    try {
      const client = new DocumentClient({ urls: { gateway: s.url }, mock: true, keys: {}, hooks: {} })
      expect((await client.call('gateway', 'POST', '/users/challenge', { json: { wallet: '0x1234' } })).status).toBe(400)
      expect(s.seen()).toBe(2)
    } finally {
      s.close()
    }
  })

  it('is not sent again to a live server (it may have acted on it)', async () => {
    const s = await dropsFirst()
    try {
      const client = new DocumentClient({ urls: { gateway: s.url }, keys: {}, hooks: {} })
      await expect(client.call('gateway', 'POST', '/users/challenge', { json: { wallet: '0x1234' } })).rejects.toThrow(/fetch failed/)
      expect(s.seen()).toBe(1)
    } finally {
      s.close()
    }
  })
})
