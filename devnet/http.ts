/**
 * Minimal HTTP plumbing shared by the devnet peers (node:http only, no framework): a route table with
 * `{param}` segments, body reading with a size limit, JSON/bytes replies, and a listener whose `close()`
 * also drops keep-alive connections so a peer can be restarted on the same port at once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Request {
  method: string
  path: string
  query: URLSearchParams
  params: Record<string, string>
  headers: IncomingMessage['headers']
  raw: IncomingMessage
  /** Reads the body (once) up to `limit` bytes; throws HttpError 413 beyond. */
  body(limit?: number): Promise<Buffer>
}

export type Handler = (req: Request, res: ServerResponse) => Promise<void> | void

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message)
  }
}

interface Route {
  method: string
  parts: string[]
  handler: Handler
}

export class Router {
  private readonly routes: Route[] = []
  /** Called before routing; may throw HttpError (auth) or return true when it answered. */
  before?: (req: Request, res: ServerResponse) => Promise<boolean | void> | boolean | void

  on(method: string, pattern: string, handler: Handler): this {
    this.routes.push({ method, parts: pattern.split('/').filter(Boolean), handler })
    return this
  }
  get(p: string, h: Handler): this {
    return this.on('GET', p, h)
  }
  post(p: string, h: Handler): this {
    return this.on('POST', p, h)
  }

  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | 'method' | undefined {
    const segs = path.split('/').filter(Boolean)
    let wrongMethod = false
    for (const r of this.routes) {
      if (r.parts.length !== segs.length) continue
      const params: Record<string, string> = {}
      let ok = true
      for (let i = 0; i < segs.length; i++) {
        const p = r.parts[i] as string
        const s = segs[i] as string
        if (p.startsWith('{') && p.endsWith('}')) {
          try {
            params[p.slice(1, -1)] = decodeURIComponent(s)
          } catch {
            ok = false
            break
          }
        } else if (p !== s) {
          ok = false
          break
        }
      }
      if (!ok) continue
      if (r.method !== method && !(r.method === 'GET' && method === 'HEAD')) {
        wrongMethod = true
        continue
      }
      return { handler: r.handler, params }
    }
    return wrongMethod ? 'method' : undefined
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers })
  res.end(text)
}

export function sendText(res: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

export function sendBytes(res: ServerResponse, status: number, bytes: Uint8Array, type: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': type, 'content-length': bytes.byteLength, ...headers })
  res.end(bytes)
}

function readBody(raw: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    raw.on('data', (c: Buffer) => {
      size += c.length
      if (size > limit) {
        reject(new HttpError(413, `body larger than ${limit} bytes`))
        raw.destroy()
        return
      }
      chunks.push(c)
    })
    raw.on('end', () => resolve(Buffer.concat(chunks)))
    raw.on('error', reject)
  })
}

export interface Listening {
  url: string
  port: number
  server: Server
  close(): Promise<void>
}

export interface ServeOptions {
  port?: number
  host?: string
  /** Formats an error reply (default `{error, message}` JSON). */
  onError?: (res: ServerResponse, err: HttpError) => void
  name?: string
}

export async function serve(router: Router, opts: ServeOptions = {}): Promise<Listening> {
  const host = opts.host ?? '127.0.0.1'
  const onError =
    opts.onError ??
    ((res: ServerResponse, err: HttpError) =>
      sendJson(res, err.status, err.body ?? { error: err.status >= 500 ? 'internal_error' : 'bad_request', message: err.message }))
  const server = createServer((raw, res) => {
    const url = new URL(raw.url ?? '/', 'http://x')
    let bodyP: Promise<Buffer> | undefined
    const req: Request = {
      method: raw.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      params: {},
      headers: raw.headers,
      raw,
      body: (limit = 64 * 1024 * 1024) => (bodyP ??= readBody(raw, limit)),
    }
    void (async () => {
      try {
        if (router.before && (await router.before(req, res))) return
        const m = router.match(req.method, req.path)
        if (m === undefined) throw new HttpError(404, `no route for ${req.method} ${req.path}`)
        if (m === 'method') throw new HttpError(405, `method ${req.method} not allowed on ${req.path}`)
        req.params = m.params
        await m.handler(req, res)
      } catch (e) {
        const err = e instanceof HttpError ? e : new HttpError(500, (e as Error)?.message ?? String(e))
        if (!(e instanceof HttpError) && opts.name) console.error(`[${opts.name}]`, e)
        if (res.headersSent) {
          res.destroy()
          return
        }
        onError(res, err)
      }
    })()
  })
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  let closing: Promise<void> | undefined
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })),
  }
}
