import { mkdtemp, readFile, rm } from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { postKeepingTail } from './postKeepingTail.js'
import { startBareProxy } from './startBareProxy.js'

// The `--trace` preload of `npm run bench -- llm`, in the bare proxy it is loaded into there, in front of an
// upstream whose first bytes come a known time after the request: the times it writes must place that wait
// between "sent" and "upstream", and keep only the calls on the traced path.
const UPSTREAM_DELAY_MS = 60

let dir: string
let upstream: http.Server
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'trace-proxy-'))
  upstream = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      setTimeout(() => res.end('event: message_start\ndata: {}\n\n'), UPSTREAM_DELAY_MS)
    })
  })
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
})
afterAll(async () => {
  await new Promise((resolve) => upstream.close(resolve))
  await rm(dir, { recursive: true, force: true })
})

describe('traceProxyTimes (npm run bench -- llm -- --trace)', () => {
  it('times each traced call: the upstream wait between sent and upstream, the first write after it and its bytes on the socket; other paths left out', async () => {
    const file = path.join(dir, 'trace.json')
    const proxy = await startBareProxy(`http://127.0.0.1:${(upstream.address() as { port: number }).port}`, file)
    const agent = new http.Agent({ keepAlive: true })
    const post = (route: string) => postKeepingTail(`${proxy.url}${route}`, { stream: true }, agent)
    expect(await post('/v1/messages')).toContain('message_start')
    await post('/v1/chat/completions')
    await post('/v1/messages')
    agent.destroy()
    await proxy.stop()

    const calls = JSON.parse(await readFile(file, 'utf8')) as { arrival: number; sent: number; upstream: number; written: number; wire: number }[]
    expect(calls).toHaveLength(2)
    for (const call of calls) {
      // In order, and the upstream's own wait between the request written and its first bytes read. No upper
      // bound on the proxy's own parts: on a loaded machine its first call alone (a new connection, cold code)
      // took 88 ms.
      expect(call.sent).toBeGreaterThanOrEqual(call.arrival)
      expect(call.upstream - call.sent).toBeGreaterThanOrEqual(UPSTREAM_DELAY_MS - 5)
      expect(call.written).toBeGreaterThanOrEqual(call.upstream)
      // …and those bytes handed to the socket after the response's write was called
      expect(call.wire).toBeGreaterThanOrEqual(call.written)
    }
  })
})
