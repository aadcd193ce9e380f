/**
 * HTTP for conformance drivers: every call goes to one of the target's servers, its response is checked
 * against that server's OpenAPI document (status documented, media type, JSON Schema 2020-12 of the body,
 * required headers), and the exchange is recorded for the row's report.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createOpenApiRouter, loadOpenApiDocument, type OpenApiRouter } from '../src/shared/http/index.js'
import type { Exchange, Server, Target } from './types.js'

const here = path.dirname(fileURLToPath(import.meta.url))
export const repoRoot = path.resolve(here, '..')

export const documentPaths: Record<Server, string> = {
  gateway: path.join(repoRoot, 'openapi', 'gateway.yaml'),
  modelserver: path.join(repoRoot, 'openapi', 'modelserver.yaml'),
}

const routers = new Map<Server, OpenApiRouter>()
/** A router over the document of `server` (loaded once per process), used only to match and validate. */
export function documentRouter(server: Server): OpenApiRouter {
  let router = routers.get(server)
  if (!router) {
    router = createOpenApiRouter({ document: loadOpenApiDocument(documentPaths[server]), handlers: {}, responseValidation: 'off' })
    routers.set(server, router)
  }
  return router
}

/** Compiles every response schema of the server's document now (before a run that checks many responses). */
export function precompileDocument(server: Server): void {
  const router = documentRouter(server)
  for (const op of router.operations) router.responseValidator.precompile(op.definition as never)
  for (const name of ['Error', 'RegistryError', 'OpenAIError', 'AuthRequired']) if (router.document.components?.schemas?.[name]) router.responseValidator.validateComponent(name, {})
}

/** Checks one response against the document; CORS preflights are outside it. */
export function documentProblems(server: Server, method: string, requestPath: string, status: number, headers: Headers, text: string): string[] {
  if (method === 'OPTIONS') return []
  const router = documentRouter(server)
  const contentType = headers.get('content-type') ?? undefined
  let body: unknown = text === '' ? undefined : text
  if (contentType && /json/.test(contentType) && !/ndjson/.test(contentType) && text !== '') {
    try {
      body = JSON.parse(text)
    } catch {
      return ['body is not valid JSON']
    }
  }
  const headerRecord: Record<string, string> = {}
  headers.forEach((value, name) => {
    headerRecord[name] = value
  })
  const result = { status, headers: headerRecord, body, contentType }
  const operation = router.matchOperation(method, requestPath.split('?')[0]!)
  if (operation) return router.responseValidator.validate(operation.definition as never, result, method.toLowerCase())
  // Outside every operation: the gate's and the router's own answers.
  if (status === 302 && server === 'gateway') return headers.get('location')?.startsWith('/login?from=') ? [] : ['302 without a /login location']
  if (status === 401 && server === 'gateway') return router.responseValidator.validateComponent('AuthRequired', body)
  if (status === 404 || status === 405 || status === 429) return method === 'HEAD' && body === undefined ? [] : router.responseValidator.validateComponent(fallbackErrorComponent(server, requestPath), body)
  return [`${method} ${requestPath} is not in the document (status ${status})`]
}

/**
 * The error body the document gives a path no operation has: `Error`, except on the model server under `/v1`
 * (OpenAI's shape) and `/v2` (the OCI distribution shape) — openapi/modelserver.yaml, "Conventions".
 */
export function fallbackErrorComponent(server: Server, requestPath: string): 'Error' | 'OpenAIError' | 'RegistryError' {
  if (server !== 'modelserver') return 'Error'
  const path = requestPath.split('?')[0]!
  if (path === '/v2' || path.startsWith('/v2/')) return 'RegistryError'
  if (path === '/v1' || path.startsWith('/v1/')) return 'OpenAIError'
  return 'Error'
}

export type Reply = { status: number; headers: Headers; text: string; body: any }
export type CallOptions = { headers?: Record<string, string>; json?: unknown; body?: FormData | string; redirect?: RequestRedirect }

const snippet = (s: string, n = 600) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s)

export class DocumentClient {
  readonly exchanges: Exchange[] = []

  constructor(readonly target: Target) {}

  url(server: Server): string {
    const url = this.target.urls[server]
    if (!url) throw new Error(`the target has no ${server} URL`)
    return url.replace(/\/+$/, '')
  }

  async call(server: Server, method: string, urlPath: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...(options.json === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers }
    const exchange: Exchange = {
      server,
      method,
      path: urlPath,
      requestHeaders: Object.keys(headers).length ? headers : undefined,
      requestBody: options.json !== undefined ? snippet(JSON.stringify(options.json)) : typeof options.body === 'string' ? snippet(options.body) : options.body ? '(multipart form)' : undefined,
      schemaErrors: [],
    }
    this.exchanges.push(exchange)
    const send = () =>
      fetch(`${this.url(server)}${urlPath}`, {
        method,
        headers,
        body: options.json !== undefined ? JSON.stringify(options.json) : options.body,
        redirect: options.redirect ?? 'manual',
      })
    let res: Response
    try {
      res = await send()
    } catch (error) {
      // A stateless mock (Prism) may close a kept-alive connection just as the next request goes out on it: on a
      // loaded machine `fetch failed` (twice in five runs of 2026-11-27). Sent again, once: a mock keeps no state,
      // so it cannot act twice. Against a live server nothing is resent — a request it may have received stays one.
      if (!this.target.mock || !(error instanceof TypeError)) throw error
      res = await send()
    }
    const text = await res.text()
    exchange.status = res.status
    exchange.responseBody = snippet(text)
    exchange.schemaErrors = documentProblems(server, method, urlPath, res.status, res.headers, text)
    this.target.onResponse?.({ server, method, path: urlPath, status: res.status, text })
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, headers: res.headers, text, body }
  }
}
