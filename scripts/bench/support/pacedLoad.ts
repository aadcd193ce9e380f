/**
 * Requests at a fixed rate, below saturation, for latency that is not dominated by queueing.
 *
 * Why not autocannon's `overallRate`/`connectionRate`: it lets each connection send back to back until its
 * quota for the current second is used up and then pause until the next second, so every second starts with
 * a saturating burst. Here request i is due at `start + i / rate` (evenly spaced) and goes out on an idle
 * keep-alive connection of a pool of `connections` (one request at a time per connection; when all are busy
 * it waits for the first to free up, and that wait counts in its latency). Latency runs from the moment the
 * client got to send the request to the end of its response (ms, float).
 *
 * The client shares the machine with the server, so it is lean: raw sockets, one prebuilt request, and a
 * response parser that only finds the status and the end of the message (node:http's client cost so much
 * per request that at 2,500 req/s its own timers ran 100 ms late). How late the client sent against the due
 * times is reported apart (`sendLateP99`), so a late client can be told from a slow server.
 */
import net from 'node:net'
import { Latencies } from './latencies.js'

export type PacedRequest = { method: string; path: string; headers?: Record<string, string>; body?: string }

export type PacedResult = {
  /** Responses received (any status), those with an unexpected status, and transport errors. */
  requests: number
  wrong: number
  errors: number
  /** Achieved rate over the run, req/s. */
  rate: number
  latencies: Latencies
  /** p99 of how late requests left against their due time (client timer lateness, ms). */
  sendLateP99: number
}

/** The request as bytes on the wire (HTTP/1.1, keep-alive). */
export function requestBytes(host: string, request: PacedRequest): Buffer {
  const body = request.body === undefined ? undefined : Buffer.from(request.body)
  let head = `${request.method} ${request.path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n`
  for (const [name, value] of Object.entries(request.headers ?? {})) head += `${name}: ${value}\r\n`
  if (body) head += `content-length: ${body.length}\r\n`
  head += '\r\n'
  return body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1')
}

/**
 * Finds where HTTP/1.1 responses end in a byte stream (Content-Length or chunked bodies; no 1xx, no HEAD).
 * `push` returns the status of each response completed by the bytes given.
 */
export class ResponseSplitter {
  #buffer: Buffer = Buffer.alloc(0)

  push(chunk: Buffer): number[] {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
    const done: number[] = []
    for (;;) {
      const end = this.#complete()
      if (end === undefined) break
      done.push(end.status)
      this.#buffer = this.#buffer.subarray(end.length)
    }
    return done
  }

  /** The first response's status and total length, if all of it is buffered. */
  #complete(): { status: number; length: number } | undefined {
    const buffer = this.#buffer
    const headEnd = buffer.indexOf('\r\n\r\n')
    if (headEnd < 0) return undefined
    const head = buffer.toString('latin1', 0, headEnd).toLowerCase()
    const status = Number(head.slice(9, 12))
    const bodyStart = headEnd + 4
    const length = /\r\ncontent-length:\s*(\d+)/.exec(head)
    if (length) {
      const total = bodyStart + Number(length[1])
      return buffer.length >= total ? { status, length: total } : undefined
    }
    if (/\r\ntransfer-encoding:[^\r]*chunked/.test(head)) {
      let at = bodyStart
      for (;;) {
        const lineEnd = buffer.indexOf('\r\n', at)
        if (lineEnd < 0) return undefined
        const size = Number.parseInt(buffer.toString('latin1', at, lineEnd), 16)
        if (size === 0) {
          // Last chunk, then (no trailers) the final CRLF.
          const last = buffer.indexOf('\r\n\r\n', lineEnd)
          return last < 0 ? undefined : { status, length: last + 4 }
        }
        at = lineEnd + 2 + size + 2
        if (buffer.length < at) return undefined
      }
    }
    // No body (204, 304, or no framing header on a keep-alive response).
    return { status, length: bodyStart }
  }
}

export async function pacedLoad(
  url: string,
  request: PacedRequest,
  options: { rate: number; seconds: number; connections: number; expect?: number },
): Promise<PacedResult> {
  const target = new URL(url)
  const bytes = requestBytes(target.host, request)
  const interval = 1000 / options.rate
  const total = Math.max(1, Math.round(options.rate * options.seconds))
  const latencies = new Latencies()
  const lateness = new Latencies()
  let received = 0
  let wrong = 0
  let errors = 0
  let sent = 0
  let finish: () => void = () => undefined
  const done = new Promise<void>((resolve) => (finish = resolve))

  type Connection = { socket: net.Socket; since: number }
  const idle: Connection[] = []
  /** Requests waiting for a connection: the time each was to leave. */
  const waiting: number[] = []
  const settle = (c: Connection, status: number | undefined) => {
    if (status === undefined) errors++
    else {
      latencies.add(performance.now() - c.since)
      if (options.expect !== undefined && status !== options.expect) wrong++
    }
    if (++received === total) finish()
    const next = waiting.shift()
    if (next !== undefined) send(c, next)
    else idle.push(c)
  }
  const send = (c: Connection, since: number) => {
    c.since = since
    c.socket.write(bytes)
  }
  const open = () =>
    new Promise<Connection>((resolve, reject) => {
      const socket = net.connect(Number(target.port), target.hostname)
      socket.setNoDelay(true)
      const c: Connection = { socket, since: 0 }
      const splitter = new ResponseSplitter()
      socket.on('data', (chunk: Buffer) => {
        for (const status of splitter.push(chunk)) settle(c, status)
      })
      socket.once('connect', () => resolve(c))
      socket.once('error', reject)
    })
  const pool = await Promise.all(Array.from({ length: options.connections }, open))
  idle.push(...pool)
  for (const c of pool) {
    c.socket.on('error', () => undefined)
    c.socket.once('close', () => {
      if (received === total) return
      // A connection the server closed: out of the pool; a request it carried failed.
      const at = idle.indexOf(c)
      if (at >= 0) idle.splice(at, 1)
      else {
        errors++
        if (++received === total) finish()
      }
    })
  }
  // Never wait for ever (every connection gone with requests still waiting).
  const giveUp = setTimeout(finish, options.seconds * 2000 + 10_000)

  const started = performance.now()
  // Send what is due, then sleep until the next request is due (timers are ≥ 1 ms apart, so at rates above
  // 1,000/s a few requests leave together; their due times, from which latency counts, stay evenly spaced).
  const tick = () => {
    const now = performance.now()
    while (sent < total && started + sent * interval <= now) {
      lateness.add(now - (started + sent * interval))
      sent++
      const c = idle.pop()
      if (c) send(c, now)
      else waiting.push(now)
    }
    if (sent < total) setTimeout(tick, Math.max(0, started + sent * interval - performance.now()))
  }
  tick()
  await done
  clearTimeout(giveUp)
  const elapsed = (performance.now() - started) / 1000
  for (const c of pool) c.socket.destroy()
  return { requests: received, wrong, errors, rate: received / elapsed, latencies, sendLateP99: lateness.percentiles([99])[0]! }
}
