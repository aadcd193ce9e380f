import http from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readBufferedJson } from './readBufferedJson.js'

// The fast path must give what body-parser's json() gives: same value, same refusal.
const parser = express.json({ limit: '1mb' })
let server: http.Server
let url: string

beforeAll(async () => {
  server = http.createServer((req, res) => {
    // Let the body arrive (it does while a real request's session is looked up).
    setTimeout(() => {
      const fast = readBufferedJson(req, 1024 * 1024)
      res.end(JSON.stringify(fast === undefined ? { fast: 'none' } : 'invalid' in fast ? { fast: 'invalid' } : { fast: fast.body }))
    }, 20)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** What body-parser makes of the same bytes: the parsed value, or 'invalid'. */
function parsed(bytes: Buffer): Promise<unknown> {
  return new Promise((resolve) => {
    const s = http.createServer((req, res) => {
      parser(req as never, res as never, (err?: unknown) => {
        resolve(err ? 'invalid' : (req as { body?: unknown }).body)
        res.end()
      })
    })
    s.listen(0, '127.0.0.1', () => {
      const r = http.request(`http://127.0.0.1:${(s.address() as AddressInfo).port}/`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': bytes.length } }, (x) => {
        x.resume()
        x.on('end', () => s.close())
      })
      r.end(bytes)
    })
  })
}

async function fast(bytes: Buffer, contentType = 'application/json'): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: new Uint8Array(bytes) })
  return ((await res.json()) as { fast: unknown }).fast
}

describe('readBufferedJson', () => {
  const bodies = ['{"a":1,"b":[true,null]}', '', '  \n[1,2]', '"text"', '42', 'null', '\uFEFF{"bom":1}', '{"a":', '   ', '{"a":1}x', '{"é":"ü"}']
  for (const text of bodies) {
    it(`gives body-parser's answer for ${JSON.stringify(text)}`, async () => {
      const bytes = Buffer.from(text, 'utf8')
      const got = await fast(bytes)
      expect(got).not.toBe('none')
      expect(got).toEqual(await parsed(bytes))
    })
  }

  it('leaves a charset parameter, a compressed body or a large body to body-parser', async () => {
    expect(await fast(Buffer.from('{}'), 'application/json; charset=utf-8')).toBe('none')
    expect(await fast(Buffer.from(`{"a":"${'x'.repeat(70_000)}"}`))).toBe('none')
  })
})
