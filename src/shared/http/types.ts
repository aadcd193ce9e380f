import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'

/** Response headers a handler sets. */
export type HttpHeaders = Record<string, string | number | readonly string[]>

/**
 * What a handler returns. Exactly one of:
 * - `body` as a JSON value (sent as `application/json` unless `contentType` says otherwise);
 * - `body` as a string or Buffer with `contentType` (HTML, text, YAML…);
 * - `stream` (NDJSON, large downloads): status and headers are validated against the document, the chunks are
 *   not (validate them where they are produced).
 * No body at all is fine for 204/302/304.
 */
export type HttpResult = {
  status: number
  headers?: HttpHeaders | undefined
  body?: unknown
  contentType?: string | undefined
  stream?: AsyncIterable<string | Uint8Array> | undefined
  /** A stream: the status and headers are sent at once, not with its first chunk (the caller learns it was accepted). */
  flushHeaders?: boolean | undefined
}

/** An operation's security requirement list as written in the document. */
export type SecurityRequirements = ReadonlyArray<Record<string, readonly string[]>>

/** The matched operation, as far as hooks need to know it. */
export type OperationInfo = {
  operationId: string
  /** Lower-case method of the document. */
  method: string
  /** Path template of the document, e.g. `/users/{wallet}/permissions`. */
  pathTemplate: string
  /** Effective security requirements (operation's own, else the document's). */
  security: SecurityRequirements
  /** The dereferenced operation object (for `x-*` extensions). */
  definition: Record<string, unknown>
}

/** What every hook and handler sees of a request. Nothing here is Express-specific except `raw`. */
export type RequestContext<Locals extends Record<string, unknown> = Record<string, unknown>> = {
  operation: OperationInfo
  operationId: string
  /** Upper-case request method. */
  method: string
  /** Request path as sent (percent-encoding kept), without the query string. */
  path: string
  /** Path plus query string as sent. */
  url: string
  /** Path parameters, percent-decoded (`%2F` becomes `/`). */
  params: Record<string, string>
  /** Query parameters, coerced to the documented types once validated. */
  query: Record<string, unknown>
  headers: IncomingHttpHeaders
  /** Parsed JSON body; `undefined` for other media types (read `raw` for those, e.g. multipart). */
  body: unknown
  /** Results of the security handlers, by scheme name (`undefined` = not satisfied / not run). */
  security: Record<string, unknown>
  /** Client address (as resolved by Express, honouring its `trust proxy` setting). */
  ip: string
  /** The underlying Node request: its body stream is untouched unless the body was JSON. */
  raw: IncomingMessage
  /** Aborted when the client goes away (stop streaming, cancel upstream calls). */
  signal: AbortSignal
  /** Per-request scratch space for hooks (e.g. the resolved session). */
  locals: Locals
}

export type OperationHandler<Locals extends Record<string, unknown> = Record<string, unknown>> = (
  context: RequestContext<Locals>,
) => HttpResult | Promise<HttpResult>

/** A request the document has no operation for. */
export type UnroutedRequest = {
  reason: 'not_found' | 'method_not_allowed'
  method: string
  path: string
  url: string
  headers: IncomingHttpHeaders
  ip: string
  raw: IncomingMessage
}

/** A response that does not match the document. */
export type ResponseValidationReport = {
  operationId: string | undefined
  method: string
  url: string
  status: number
  errors: string[]
}

/** One reason a request does not match the document. `path` is a JSON Pointer inside `location`. */
export type RequestValidationIssue = {
  location: 'body' | 'query' | 'path' | 'header' | 'cookie' | 'request'
  path: string
  message: string
}
