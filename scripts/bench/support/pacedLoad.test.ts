import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Latencies } from './latencies.js'
import { pacedLoad, requestBytes, ResponseSplitter } from './pacedLoad.js'

describe('pacedLoad', () => {
  let server: http.Server
  let url: string
  const arrivals: number[] = []
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      arrivals.push(performance.now())
      // /slow answers after 20 ms, everything else at once; /teapot with 418.
      const reply = () => {
        res.statusCode = req.url === '/teapot' ? 418 : 200
        res.end('{}')
      }
      if (req.url === '/slow') setTimeout(reply, 20)
      else reply()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('sends the requested number of requests, spread over the run rather than in a burst', async () => {
    arrivals.length = 0
    const r = await pacedLoad(url, { method: 'GET', path: '/' }, { rate: 200, seconds: 1, connections: 4, expect: 200 })
    expect(r.requests).toBe(200)
    expect(r.wrong + r.errors).toBe(0)
    // The second half of the requests arrives in the second half of the run (a per-second burst would not).
    const span = arrivals.at(-1)! - arrivals[0]!
    expect(span).toBeGreaterThan(800)
    expect(arrivals[100]! - arrivals[0]!).toBeGreaterThan(span * 0.35)
    expect(r.rate).toBeGreaterThan(150)
    expect(r.rate).toBeLessThan(220)
  })

  it('measures latency with sub-millisecond resolution and counts unexpected statuses', async () => {
    const slow = await pacedLoad(url, { method: 'GET', path: '/slow' }, { rate: 50, seconds: 0.4, connections: 4, expect: 200 })
    const [p50] = slow.latencies.percentiles([50])
    expect(p50).toBeGreaterThanOrEqual(20)
    expect(p50).toBeLessThan(200)
    const fast = await pacedLoad(url, { method: 'GET', path: '/' }, { rate: 50, seconds: 0.4, connections: 4 })
    expect(fast.latencies.percentiles([50])[0]! % 1).not.toBe(0) // not truncated to whole milliseconds
    const teapot = await pacedLoad(url, { method: 'GET', path: '/teapot' }, { rate: 50, seconds: 0.2, connections: 2, expect: 200 })
    expect(teapot.wrong).toBe(teapot.requests)
  })
})

describe('Latencies', () => {
  it('gives nearest-rank percentiles over everything added, beyond its initial capacity', () => {
    const l = new Latencies()
    for (let i = 10_000; i >= 1; i--) l.add(i / 100)
    expect(l.count).toBe(10_000)
    expect(l.percentiles([50, 99, 100])).toEqual([50, 99, 100])
    expect(new Latencies().percentiles([50])[0]).toBeNaN()
  })
})

describe('ResponseSplitter', () => {
  it('finds each response of a keep-alive stream, however the bytes are cut', () => {
    const stream = Buffer.from(
      'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}' +
        'HTTP/1.1 302 Found\r\nLocation: /login\r\ncontent-length: 0\r\n\r\n' +
        'HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n' +
        'HTTP/1.1 204 No Content\r\n\r\n',
    )
    for (const cut of [1, 7, 50, stream.length]) {
      const splitter = new ResponseSplitter()
      const statuses: number[] = []
      for (let at = 0; at < stream.length; at += cut) statuses.push(...splitter.push(stream.subarray(at, at + cut)))
      expect(statuses).toEqual([200, 302, 401, 204])
    }
  })
})

describe('requestBytes', () => {
  it('writes a keep-alive HTTP/1.1 request with its headers and body length', () => {
    const text = requestBytes('127.0.0.1:80', { method: 'POST', path: '/users/challenge', headers: { 'content-type': 'application/json' }, body: '{"a":"é"}' }).toString()
    expect(text).toBe('POST /users/challenge HTTP/1.1\r\nhost: 127.0.0.1:80\r\nconnection: keep-alive\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n{"a":"é"}')
  })
})
