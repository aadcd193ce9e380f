import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { drainHttpServer } from './drainHttpServer.js'

const servers: Server[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.closeAllConnections(), s.close()
})

/** A server answering every request after `slowMs` (0 unless the path is `/slow`). */
async function listen(slowMs = 0): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    setTimeout(() => res.end('ok'), req.url === '/slow' ? slowMs : 0)
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { server, port: (server.address() as AddressInfo).port }
}

/** One request on a fresh connection (as a balancer that opens one per request): its status and `Connection`, or the error's code. */
function get(port: number, path = '/'): Promise<{ status: number; connection?: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }))
    })
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }))
    req.end()
  })
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Requests to `path` every `everyMs` until `until()`; their answers. */
async function steady(port: number, everyMs: number, until: () => boolean, path = '/') {
  const answers: Promise<Awaited<ReturnType<typeof get>>>[] = []
  while (!until()) {
    answers.push(get(port, path))
    await sleep(everyMs)
  }
  return Promise.all(answers)
}

describe('drainHttpServer', () => {
  it('serves through the delay with Connection: close, then lets an in-flight request finish after it stops accepting', async () => {
    const { server, port } = await listen(400)
    const drained = drainHttpServer(server, { delayMs: 500, deadlineMs: 5_000 })
    const during = await get(port)
    const slow = get(port, '/slow') // still running when the delay ends
    await sleep(600)
    expect(await get(port)).toEqual({ error: 'ECONNREFUSED' }) // the listener is closed
    expect(during).toEqual({ status: 200, connection: 'close' })
    expect(await slow).toEqual({ status: 200, connection: 'close' })
    await drained
  })

  it('with quietMs, keeps accepting past the delay while requests still come, and stops once they stop', async () => {
    // A balancer that has not yet seen the replica not ready: requests every 50 ms for 1.5 s, past the 300 ms
    // delay. Without the quiet period the ones after 300 ms are refused. (A quiet period of 1 s: only a stall of
    // the test's own process that long could make a gap in its requests.)
    const { server, port } = await listen()
    let closedAt = 0
    const began = Date.now()
    const drained = drainHttpServer(server, { delayMs: 300, quietMs: 1_000, deadlineMs: 10_000 }).then(() => (closedAt = Date.now()))
    const answers = await steady(port, 50, () => Date.now() - began > 1_500)
    const lastSentAt = Date.now()
    await drained
    expect(answers.filter((a) => !('status' in a) || a.status !== 200)).toEqual([])
    expect(answers.length).toBeGreaterThan(10)
    expect(closedAt - lastSentAt).toBeGreaterThanOrEqual(900) // the quiet period ran from the last request, not from the delay's end
    expect(await get(port)).toEqual({ error: 'ECONNREFUSED' })
  })

  it('does not count the balancer’s checks as traffic: probes alone do not hold the stop', async () => {
    const { server, port } = await listen()
    let neverQuiet = false
    let done = false
    const drained = drainHttpServer(server, {
      delayMs: 100,
      quietMs: 300,
      isProbe: (req) => req.url === '/health/ready',
      deadlineMs: 10_000,
      onNeverQuiet: () => (neverQuiet = true),
    }).then(() => (done = true))
    const probes = steady(port, 50, () => done, '/health/ready')
    await drained
    await probes
    expect(neverQuiet).toBe(false)
  })

  it('stops at the deadline when requests never stop coming, and says so', async () => {
    const { server, port } = await listen()
    let neverQuiet = false
    let done = false
    const drained = drainHttpServer(server, { delayMs: 100, quietMs: 1_000, deadlineMs: 1_500, onNeverQuiet: () => (neverQuiet = true) }).then(() => (done = true))
    const answers = steady(port, 50, () => done)
    await drained
    await answers
    expect(neverQuiet).toBe(true)
    expect(await get(port)).toEqual({ error: 'ECONNREFUSED' })
  })
})
