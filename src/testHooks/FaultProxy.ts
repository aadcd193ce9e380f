import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { AddressInfo } from 'node:net'

/**
 * A failure armed on one peer: answer `status` instead of forwarding (a 5xx of the peer), or `reset` the
 * connection (the peer unreachable); `times` bounds how many requests it takes (default: until cleared); `path`
 * (a prefix) limits it to some of the peer's routes, e.g. `/tx` for the storage upstream's uploads.
 */
export type Fault = { kind: 'status'; status: number; body?: string } | { kind: 'reset' }
export type ArmedFault = Fault & { times?: number; path?: string }

/**
 * A loopback reverse proxy in front of one peer of the gateway (the facilitator, algod, the storage upstream,
 * the Arweave gateway, a model server, an RPC): requests pass through unchanged until a fault is armed, then the
 * armed requests fail as that peer failing would look to the gateway. The gateway is configured with the proxy's
 * URL instead of the peer's, so no domain code knows about it.
 */
export class FaultProxy {
  #fault: (ArmedFault & { left: number }) | undefined
  #server: Server | undefined
  /** Requests answered by the armed fault so far (reported by the hooks port). */
  failed = 0

  constructor(readonly target: URL) {}

  get url(): string {
    const address = this.#server?.address() as AddressInfo | null
    if (!address) throw new Error('fault proxy not listening')
    return `http://127.0.0.1:${address.port}${this.target.pathname.replace(/\/+$/, '')}`
  }

  get fault(): ArmedFault | undefined {
    if (!this.#fault) return undefined
    const { left, ...fault } = this.#fault
    return Number.isFinite(left) ? { ...fault, times: left } : fault
  }

  arm(fault: ArmedFault): void {
    this.#fault = { ...fault, left: fault.times ?? Number.POSITIVE_INFINITY }
  }

  clear(): void {
    this.#fault = undefined
  }

  async listen(): Promise<void> {
    this.#server = createServer((req, res) => this.#handle(req, res))
    this.#server.keepAliveTimeout = 65_000
    await new Promise<void>((resolve, reject) => {
      this.#server!.once('error', reject)
      this.#server!.listen(0, '127.0.0.1', () => resolve())
    })
  }

  async close(): Promise<void> {
    const server = this.#server
    if (!server) return
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  #takeFault(path: string): Fault | undefined {
    const armed = this.#fault
    if (!armed || (armed.path !== undefined && !path.startsWith(armed.path))) return undefined
    armed.left--
    if (armed.left <= 0) this.#fault = undefined
    this.failed++
    return armed
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const prefix = this.target.pathname.replace(/\/+$/, '')
    const path = (req.url ?? '/').startsWith(prefix) ? (req.url ?? '/').slice(prefix.length) || '/' : (req.url ?? '/')
    const fault = this.#takeFault(path)
    if (fault?.kind === 'reset') {
      req.socket.destroy()
      return
    }
    if (fault) {
      // the body is drained first, as a peer answering an error after reading the request would
      req.resume()
      req.once('end', () => {
        const body = fault.body ?? `fault injected by the test hooks (${fault.status})`
        res.writeHead(fault.status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) })
        res.end(body)
      })
      return
    }
    const send = this.target.protocol === 'https:' ? httpsRequest : httpRequest
    const upstream = send(
      { protocol: this.target.protocol, hostname: this.target.hostname, port: this.target.port, method: req.method, path: `${prefix}${path}`, headers: { ...req.headers, host: this.target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders)
        answer.pipe(res)
        answer.once('error', () => res.destroy())
      },
    )
    // The peer unreachable or cut mid-answer: the gateway sees its connection fail, as without the proxy.
    upstream.once('error', () => req.socket.destroy())
    req.pipe(upstream)
  }
}
