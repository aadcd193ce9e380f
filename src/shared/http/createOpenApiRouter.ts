import type { IncomingMessage, ServerResponse } from 'node:http'
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express'
import { type Document, OpenAPIBackend, type Operation } from 'openapi-backend'
import type { ErrorObject } from 'ajv'
import type { Logger } from '../logger.js'
import { jsonDepthExceeds } from './jsonDepthExceeds.js'
import { pumpStream } from './pumpStream.js'
import { readBufferedJson } from './readBufferedJson.js'
import {
  isValidatableBody,
  type ParsedRequestValidation,
  prepareParsedRequestValidation,
  type RequestValidatorFunction,
  validateParsedRequest,
} from './validateParsedRequest.js'
import { compileOperationMatcher, type OperationRouter } from './compileOperationMatcher.js'
import { createAjv } from './createAjv.js'
import { isJsonMediaType, ResponseValidator } from './ResponseValidator.js'
import type {
  HttpResult,
  OperationHandler,
  OperationInfo,
  RequestContext,
  RequestValidationIssue,
  ResponseValidationReport,
  SecurityRequirements,
  UnroutedRequest,
} from './types.js'

/** `off`: never check; `warn`: log and report mismatches, send as is; `error`: replace a mismatching response with 500. */
export type ResponseValidationMode = 'off' | 'warn' | 'error'

export type UnroutedResult = HttpResult & {
  /** `components.schemas` name the JSON body must match (responses outside any operation are validated against it). */
  component?: string
}

export type OpenApiRouterOptions<Locals extends Record<string, unknown> = Record<string, unknown>> = {
  /** The OpenAPI 3.1 document as a plain object (not yet dereferenced; it is cloned). */
  document: Record<string, unknown>
  /** Handlers by operationId. An operation without one answers 501. */
  handlers: Partial<Record<string, OperationHandler<Locals>>>
  /**
   * Per security scheme name: returns a truthy value when the request satisfies the scheme (stored in
   * `context.security[name]`); falsy or a throw means not satisfied. Runs before the body is read.
   */
  securityHandlers?: Record<string, (context: RequestContext<Locals>) => unknown | Promise<unknown>>
  /** Response when none of the operation's security requirements is satisfied (default 401 `unauthorized`). */
  unauthorized?: (context: RequestContext<Locals>) => HttpResult | Promise<HttpResult>
  /** Response for a path or method the document does not have (default 404 `not_found` / 405 `method_not_allowed`). */
  unrouted?: (request: UnroutedRequest) => UnroutedResult | Promise<UnroutedResult>
  /** Response for a request that fails validation (default 400 `invalid_request` with the errors in `details`). */
  invalidRequest?: (context: RequestContext<Locals>, errors: RequestValidationIssue[]) => HttpResult
  /** Response for an error a handler threw (default 500 `internal_error`). */
  mapError?: (error: unknown, context: RequestContext<Locals> | undefined) => HttpResult
  /** Whether to validate this request against the document (default: always). */
  validateRequest?: (context: RequestContext<Locals>) => boolean
  responseValidation?: ResponseValidationMode
  /** Called for every response that does not match the document (tests collect these). */
  onResponseValidationError?: (report: ResponseValidationReport) => void
  /** Called once per request when the response is finished (metrics, access log). */
  onResponse?: (info: ResponseInfo) => void
  /** Creates the per-request `locals`. */
  createLocals?: () => Locals
  /** Largest JSON body accepted (default `1mb`). */
  jsonLimit?: string | number
  /** Deepest nesting of arrays/objects accepted in a JSON body (default 32; deeper → 400 `invalid_json`). */
  jsonMaxDepth?: number
  logger?: Logger
}

export type ResponseInfo = {
  operationId: string | undefined
  method: string
  path: string
  status: number
  durationMs: number
  requestBytes: number
  responseBytes: number
}

export type OpenApiRouter = {
  /** Express middleware answering every request (mount last, after CORS and rate limiting). */
  handler: RequestHandler
  api: OpenAPIBackend
  /** The dereferenced document. */
  document: Document
  operations: OperationInfo[]
  /** The operation a method and raw path route to, if any. */
  matchOperation(method: string, path: string): OperationInfo | undefined
  /** Validates a result against the document and sends it — for responses produced outside the router. */
  send(req: IncomingMessage, res: ServerResponse, result: UnroutedResult, operation?: OperationInfo): Promise<void>
  responseValidator: ResponseValidator
}

type RequestState<Locals extends Record<string, unknown>> = {
  req: Request
  res: Response
  obRequest: { method: string; path: string; query: string; headers: Record<string, string | string[]>; body?: unknown }
  /** Created on first use of `ctx.signal` (most handlers never read it; an AbortController costs µs). */
  controller?: AbortController
  locals: Locals
  /** The matched operation (also when a later step threw: the response is validated against it). */
  operation?: Operation
  context?: RequestContext<Locals>
}

/**
 * A request's context. A class so the lazy parts (`ip`, `signal`) are prototype getters rather than closures
 * made for every request: Express resolves `req.ip` through proxy-addr on every read, and an
 * AbortController (plus its `close` listener) costs microseconds most handlers never need.
 */
class PipelineContext<Locals extends Record<string, unknown>> implements RequestContext<Locals> {
  readonly operationId: string
  readonly method: string
  readonly path: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
  body: unknown = undefined
  security: Record<string, unknown> = {}
  readonly raw: Request
  readonly locals: Locals
  #state: RequestState<Locals>
  #ip: string | undefined

  constructor(
    readonly operation: OperationInfo,
    state: RequestState<Locals>,
    public params: Record<string, string>,
    public query: Record<string, unknown>,
  ) {
    const req = state.req
    this.operationId = operation.operationId
    this.method = req.method
    this.path = state.obRequest.path
    this.url = req.originalUrl
    this.headers = req.headers
    this.raw = req
    this.locals = state.locals
    this.#state = state
  }

  get ip(): string {
    if (this.#ip === undefined) {
      const req = this.#state.req
      this.#ip = req.ip ?? req.socket.remoteAddress ?? ''
    }
    return this.#ip
  }

  set ip(value: string) {
    this.#ip = value
  }

  /** Aborted when the client goes away before the response is finished. */
  get signal(): AbortSignal {
    const state = this.#state
    if (!state.controller) {
      const controller = new AbortController()
      state.controller = controller
      const res = state.res
      if (res.destroyed) {
        if (!res.writableFinished) controller.abort()
      } else
        res.once('close', () => {
          if (!res.writableFinished) controller.abort()
        })
    }
    return state.controller.signal
  }
}

export class RouterSetupError extends Error {}

/**
 * openapi-backend drops a request's trailing slash before matching but compares with the document's paths
 * as written, so `/doc/` in the document would never match. Normalise the document the same way: `/doc/`
 * and `/doc` both route to it.
 */
function withoutTrailingSlashes(document: Record<string, unknown>): Record<string, unknown> {
  const paths = document.paths as Record<string, unknown> | undefined
  if (!paths) return document
  const normalised: Record<string, unknown> = {}
  for (const [path, item] of Object.entries(paths)) normalised[path.length > 1 ? path.replace(/\/+$/, '') : path] = item
  return { ...document, paths: normalised }
}

function errorBody(error: string, message: string, details?: Record<string, unknown>) {
  return details ? { error, message, details } : { error, message }
}

function toOperationInfo(operation: Operation): OperationInfo {
  return {
    operationId: operation.operationId ?? '',
    method: operation.method,
    pathTemplate: operation.path,
    security: (operation.security ?? []) as SecurityRequirements,
    definition: operation as unknown as Record<string, unknown>,
  }
}

function mediaTypeOf(headers: IncomingMessage['headers']): string {
  return String(headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase()
}

const locations: Record<string, RequestValidationIssue['location']> = {
  requestBody: 'body',
  query: 'query',
  path: 'path',
  header: 'header',
  cookie: 'cookie',
}

/** Ajv errors of openapi-backend's request validators → `{location, path, message}` (JSON Pointer `path`). */
export function toValidationIssues(
  errors: ReadonlyArray<{ instancePath?: string; message?: string; params?: unknown }>,
): RequestValidationIssue[] {
  return errors.map((e) => {
    const params = (e.params && typeof e.params === 'object' ? e.params : {}) as Record<string, unknown>
    const segments = (e.instancePath ?? '').split('/').slice(1)
    let location: RequestValidationIssue['location'] = 'request'
    let pointer = ''
    if (segments.length > 0 && locations[segments[0]!]) {
      location = locations[segments[0]!]!
      pointer = segments.length > 1 ? `/${segments.slice(1).join('/')}` : ''
    }
    if (location === 'request' && params.missingProperty === 'requestBody') location = 'body'
    else if (typeof params.missingProperty === 'string') pointer = `${pointer}/${params.missingProperty}`
    const extra = typeof params.additionalProperty === 'string' ? ` (${params.additionalProperty})` : ''
    return { location, path: pointer || '/', message: `${e.message ?? 'is invalid'}${extra}` }
  })
}

/**
 * Builds an Express 5 request handler that routes every request by operationId over openapi-backend's loaded
 * document, matcher rules and request validators (OpenAPI 3.1: `quick` init, Ajv 2020-12 + formats), runs
 * per-scheme security handlers, reads a JSON body only once the
 * request is authorised (any other media type — multipart, octet-stream — is left on `raw` for the handler),
 * validates the request, calls the handler and validates the response against the document before sending it.
 */
export function createOpenApiRouter<Locals extends Record<string, unknown> = Record<string, unknown>>(
  options: OpenApiRouterOptions<Locals>,
): OpenApiRouter {
  const mode = options.responseValidation ?? 'error'
  const logger = options.logger
  const api = new OpenAPIBackend({
    definition: withoutTrailingSlashes(structuredClone(options.document)) as unknown as Document,
    quick: true,
    strict: false,
    coerceTypes: true,
    ignoreTrailingSlashes: true,
    validate: () => false, // validation runs in `readAndValidate`, after security and the body
    customizeAjv: (_ajv, ajvOptions) =>
      createAjv({ ...(ajvOptions as object), strict: false }) as unknown as ReturnType<NonNullable<import('openapi-backend').Options['customizeAjv']>>,
  })
  api.init()
  // openapi-backend flattens the document into its operation list again (lodash, an object per operation) on
  // every match — ~35 µs per call with 26 operations, and a request is matched two or three times. The
  // document never changes after init, so the list is built once.
  const routedOperations = api.router.getOperations()
  api.router.getOperations = () => routedOperations
  // Its `matchOperation` scans every operation and compiles a RegExp per operation on each call; the
  // compiled matcher gives the same answers (compileOperationMatcher.test.ts compares them on both documents).
  api.router.matchOperation = compileOperationMatcher(api.router as unknown as OperationRouter, routedOperations) as typeof api.router.matchOperation
  const document = api.definition
  const responseValidator = new ResponseValidator(document as never)
  const operations = api.router.getOperations().map(toOperationInfo)
  const operationsById = new Map(operations.map((o) => [o.operationId, o]))
  const jsonMaxDepth = options.jsonMaxDepth ?? 32
  const jsonLimit = options.jsonLimit ?? '1mb'
  /** The parser's limit in bytes, for the fast path (0: a limit it does not read, the parser alone decides). */
  const jsonLimitBytes = typeof jsonLimit === 'number' ? jsonLimit : /^\d+mb$/i.test(jsonLimit) ? Number.parseInt(jsonLimit, 10) * 1024 * 1024 : 0
  const jsonParser = express.json({ limit: jsonLimit, type: (req) => isJsonMediaType(mediaTypeOf(req.headers)) })
  const depthProblem = (body: unknown): HttpResult | undefined =>
    jsonDepthExceeds(body, jsonMaxDepth) ? { status: 400, body: errorBody('invalid_json', `The request body nests deeper than ${jsonMaxDepth} levels.`) } : undefined

  /** The one context of a request: built once the operation is matched, completed as the pipeline runs. */
  const createContext = (
    operation: OperationInfo,
    state: RequestState<Locals>,
    params: Record<string, string>,
    query: Record<string, unknown>,
  ): RequestContext<Locals> => {
    const ctx = new PipelineContext<Locals>(operation, state, params, query)
    state.context = ctx
    return ctx
  }

  const readJson = (state: RequestState<Locals>): HttpResult | undefined | Promise<HttpResult | undefined> => {
    const headers = state.req.headers
    // No body (type-is's `hasBody`, the parser's own first check): nothing to read, no promise to make.
    if (headers['transfer-encoding'] === undefined && Number.isNaN(Number(headers['content-length']))) return undefined
    if (isJsonMediaType(mediaTypeOf(headers))) {
      const buffered = readBufferedJson(state.req, jsonLimitBytes)
      if (buffered) {
        if ('invalid' in buffered) return { status: 400, body: errorBody('invalid_json', 'The request body is not valid JSON.') }
        ;(state.req as { body?: unknown }).body = buffered.body
        return depthProblem(buffered.body)
      }
    }
    return new Promise<HttpResult | undefined>((resolve) => {
      jsonParser(state.req, state.res, (err?: unknown) => {
        if (!err) return resolve(depthProblem((state.req as { body?: unknown }).body))
        const e = err as { type?: string; message?: string }
        if (e.type === 'entity.too.large')
          return resolve({ status: 413, body: errorBody('payload_too_large', 'The request body is too large.') })
        if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
          return resolve({ status: 415, body: errorBody('unsupported_media_type', e.message ?? 'Unsupported encoding.') })
        if (e.type === 'request.aborted') return resolve({ status: 400, body: errorBody('request_aborted', 'The request was aborted.') })
        return resolve({ status: 400, body: errorBody('invalid_json', 'The request body is not valid JSON.') })
      })
    })
  }

  const invalidRequest =
    options.invalidRequest ??
    ((_ctx: RequestContext<Locals>, errors: RequestValidationIssue[]): HttpResult => ({
      status: 400,
      body: errorBody(
        'invalid_request',
        `request does not match the API description: ${errors[0] ? `${errors[0].location} ${errors[0].path} ${errors[0].message}` : 'invalid'}`,
        { errors },
      ),
    }))

  const mapError =
    options.mapError ??
    ((error: unknown): HttpResult => {
      logger?.error({ err: error }, 'unhandled error in handler')
      return { status: 500, body: errorBody('internal_error', 'Internal error.') }
    })

  const securityHandlers = new Map<string, (ctx: RequestContext<Locals>) => unknown>()
  for (const [name, fn] of Object.entries(options.securityHandlers ?? {})) securityHandlers.set(name, fn)

  const handlersById = new Map<string, OperationHandler<Locals>>()
  for (const [operationId, handler] of Object.entries(options.handlers)) {
    if (!handler) continue
    if (!operationsById.has(operationId)) throw new RouterSetupError(`Handler for unknown operationId ${operationId}`)
    handlersById.set(operationId, handler)
  }

  /** What the pipeline needs of an operation, worked out once instead of on every request. */
  type Prepared = {
    info: OperationInfo
    /** Every scheme named by the requirements, once each, in order. */
    schemes: string[]
    /** Per requirement object, its scheme names (all must be satisfied; `{}` is always satisfied). */
    requirements: string[][]
    /** The document's path has no `{parameter}`: path parameters are `{}` without parsing. */
    literalPath: boolean
    /** Request media types the operation documents, lower-case. */
    documentedMedia: string[]
    /**
     * No parameters and no request body: with a literal path and no query string the validators can only
     * pass (path `{}`, query `{}`, any headers and cookies, no body schema), so they are not run.
     */
    nothingToValidate: boolean
    /** How its requests are validated without parsing them again (`validateParsedRequest`). */
    validation: ParsedRequestValidation
  }
  const prepared = new Map<Operation, Prepared>()
  for (const op of routedOperations) {
    const info = operationsById.get(op.operationId ?? '')
    if (!info) continue
    const requirements = ((op.security ?? []) as Record<string, unknown>[]).map((r) => Object.keys(r))
    prepared.set(op, {
      info,
      schemes: [...new Set(requirements.flat())],
      requirements,
      literalPath: !op.path.includes('{'),
      nothingToValidate:
        !op.path.includes('{') && ((op.parameters ?? []) as unknown[]).length === 0 && (op as { requestBody?: unknown }).requestBody === undefined,
      validation: prepareParsedRequestValidation(op),
      documentedMedia: Object.keys(((op as { requestBody?: { content?: object } }).requestBody?.content ?? {}) as object).map((m) => m.toLowerCase()),
    })
  }

  /** A scheme's verdict as openapi-backend records it: the handler's value, `{error}` for a throw, `undefined` without handler. */
  const runScheme = async (name: string, ctx: RequestContext<Locals>): Promise<unknown> => {
    const fn = securityHandlers.get(name)
    if (!fn) return undefined
    try {
      return await fn(ctx)
    } catch (error) {
      return { error: error || new Error('security handler rejected') }
    }
  }
  const satisfied = (value: unknown) => Boolean(value) && !(typeof value === 'object' && (value as { error?: unknown }).error)

  /**
   * Route → security → (body, validation) → handler, for one request. The same steps, order and answers as
   * openapi-backend's `handleRequest` with the hooks this router registered before, without its costs: it
   * parsed every request three times (lodash header map, cookies, query, path parameters through a RegExp
   * compiled per call) and built the context object once per hook. Here a request is matched once, parsed
   * at most once (not at all for a literal path without a query string) and has one context.
   */
  async function route(state: RequestState<Locals>): Promise<UnroutedResult> {
    let op: Operation
    try {
      op = api.router.matchOperation(state.obRequest as never, true) as Operation
    } catch (error) {
      return unrouted(error instanceof Error && error.message.startsWith('405') ? 'method_not_allowed' : 'not_found', state)
    }
    state.operation = op
    const p = prepared.get(op)!
    let params: Record<string, string>
    let query: Record<string, unknown>
    if (p.literalPath && state.obRequest.query === '') {
      params = {}
      query = {}
    } else {
      const parsed = api.router.parseRequest(state.obRequest as never, op)
      params = (parsed.params ?? {}) as Record<string, string>
      query = (parsed.query ?? {}) as Record<string, unknown>
    }
    const ctx = createContext(p.info, state, params, query)

    // Security: every named scheme's handler (concurrently), then any one requirement fully satisfied.
    const results: Record<string, unknown> = {}
    if (p.schemes.length > 0) {
      // All started before any is awaited (they run concurrently, as openapi-backend ran them).
      const verdicts = p.schemes.map((name) => runScheme(name, ctx))
      for (let i = 0; i < verdicts.length; i++) results[p.schemes[i]!] = await verdicts[i]
    }
    const authorized = p.requirements.some((names) => names.every((name) => satisfied(results[name])))
    ctx.security = { ...results, authorized }
    if (p.requirements.length > 0 && !authorized) {
      if (options.unauthorized) return options.unauthorized(ctx)
      return { status: 401, body: errorBody('unauthorized', 'Authentication required.') }
    }

    const handler = handlersById.get(p.info.operationId)
    if (!handler) return { status: 501, body: errorBody('not_implemented', `Operation ${p.info.operationId} is not implemented yet.`) }
    let early = readAndValidate(state, op, p, ctx)
    if (early instanceof Promise) early = await early
    if (early) return early
    return handler(ctx)
  }

  /** The body (JSON only, once authorised) and the request checked against the document; a result ends the request. */
  function readAndValidate(
    state: RequestState<Locals>,
    op: Operation,
    p: Prepared,
    ctx: RequestContext<Locals>,
  ): HttpResult | undefined | Promise<HttpResult | undefined> {
    const read = readJson(state)
    if (read === undefined) return validate(state, op, p, ctx)
    if (!(read instanceof Promise)) return read
    return read.then((problem) => problem ?? validate(state, op, p, ctx))
  }

  function validate(state: RequestState<Locals>, op: Operation, p: Prepared, ctx: RequestContext<Locals>): HttpResult | undefined {
    const media = mediaTypeOf(state.req.headers)
    const isJson = isJsonMediaType(media)
    if (isJson) state.obRequest.body = (state.req as { body?: unknown }).body
    ctx.body = state.obRequest.body
    if (options.validateRequest && !options.validateRequest(ctx)) return undefined
    if (p.nothingToValidate && state.obRequest.query === '' && !isJson) return undefined
    const body = isJson ? state.obRequest.body : undefined
    const result =
      p.validation.needsFullValidation || !isValidatableBody(body)
        ? fullValidation(state, op, body)
        : validateParsedRequest((api.validator.getRequestValidatorsForOperation(p.info.operationId) ?? []) as RequestValidatorFunction[], p.validation, {
            params: ctx.params,
            query: ctx.query,
            headers: state.req.headers,
            body,
          })
    const documentedMedia = p.documentedMedia
    // A non-JSON body the operation documents (multipart, octet-stream…) is read by the handler from `raw`.
    const rawBody = !isJson && media !== '' && documentedMedia.some((m) => m === media || (m.endsWith('/*') && media.startsWith(m.slice(0, -1))))
    const errors = (result.errors ?? []).filter(
      (e) =>
        // Unknown query parameters are ignored (tracking parameters, cache busters), not rejected.
        !(e.instancePath === '/query' && e.keyword === 'additionalProperties') &&
        !(
          rawBody &&
          ((e.instancePath ?? '').startsWith('/requestBody') || (e.params as { missingProperty?: string } | undefined)?.missingProperty === 'requestBody')
        ),
    )
    if (!isJson && documentedMedia.length > 0 && media !== '' && !rawBody)
      return {
        status: 415,
        body: errorBody('unsupported_media_type', `Content-Type ${media} is not accepted; use ${documentedMedia.join(' or ')}.`),
      }
    if (errors.length > 0) return invalidRequest(ctx, toValidationIssues(errors))
    ctx.query = result.query
    return undefined
  }

  /** openapi-backend's own `validateRequest` (it parses the request again): for what `validateParsedRequest` leaves to it. */
  function fullValidation(state: RequestState<Locals>, op: Operation, body: unknown): { errors: ErrorObject[] | null; query: Record<string, unknown> } {
    const result = api.validator.validateRequest({ ...state.obRequest, body } as never, op)
    return { errors: (result.errors ?? null) as ErrorObject[] | null, query: (result.coerced?.query ?? state.context!.query) as Record<string, unknown> }
  }

  async function unrouted(reason: UnroutedRequest['reason'], state: RequestState<Locals>): Promise<UnroutedResult> {
    const request: UnroutedRequest = {
      reason,
      method: state.req.method,
      path: state.obRequest.path,
      url: state.req.originalUrl,
      headers: state.req.headers,
      ip: state.req.ip ?? '',
      raw: state.req,
    }
    if (options.unrouted) return options.unrouted(request)
    return reason === 'not_found'
      ? { status: 404, body: errorBody('not_found', `No route for ${request.method} ${request.path}.`) }
      : { status: 405, body: errorBody('method_not_allowed', `${request.method} is not allowed on ${request.path}.`) }
  }

  function checkResponse(
    req: IncomingMessage,
    result: UnroutedResult,
    operation: OperationInfo | undefined,
  ): UnroutedResult {
    if (mode === 'off') return result
    let errors: string[] = []
    const method = (req.method ?? 'GET').toLowerCase()
    if (operation) errors = responseValidator.validate(operation.definition as never, result, method)
    else if (result.component && result.body !== undefined && !result.stream) errors = responseValidator.validateComponent(result.component, result.body)
    if (errors.length === 0) return result
    const report: ResponseValidationReport = {
      operationId: operation?.operationId,
      method: req.method ?? 'GET',
      url: req.url ?? '',
      status: result.status,
      errors,
    }
    options.onResponseValidationError?.(report)
    logger?.warn({ responseValidation: report }, 'response does not match the OpenAPI document')
    if (mode === 'warn') return result
    return {
      status: 500,
      body: errorBody('response_validation_failed', `The ${result.status} response does not match the API document.`, {
        errors,
      }),
    }
  }

  async function send(req: IncomingMessage, res: ServerResponse, input: UnroutedResult, operation?: OperationInfo): Promise<void> {
    await deliver(req, res, input, operation)
  }

  /** Sends a result; only a streamed body gives a promise (a JSON or text body is written at once). */
  function deliver(req: IncomingMessage, res: ServerResponse, input: UnroutedResult, operation?: OperationInfo): Promise<void> | undefined {
    const result = checkResponse(req, input, operation)
    if (res.headersSent) return
    res.statusCode = result.status
    const headers = result.headers
    if (headers) for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string | number | string[])
    const isHead = req.method === 'HEAD'
    if (result.stream) {
      if (!res.hasHeader('content-type')) res.setHeader('content-type', result.contentType ?? 'application/octet-stream')
      if (isHead) {
        res.end()
        return
      }
      let piping: Promise<void>
      try {
        piping = pumpStream(result.stream, res)
      } catch (error) {
        piping = Promise.reject(error)
      }
      return piping.catch((error: unknown) => {
        logger?.debug({ err: error }, 'response stream ended early')
        if (!res.writableEnded) res.destroy()
      })
    }
    let payload: string | Buffer | undefined
    if (result.body === undefined) payload = undefined
    else if (typeof result.body === 'string' || Buffer.isBuffer(result.body)) {
      payload = result.body
      if (!res.hasHeader('content-type')) res.setHeader('content-type', result.contentType ?? 'text/plain; charset=utf-8')
    } else {
      payload = JSON.stringify(result.body)
      if (!res.hasHeader('content-type')) res.setHeader('content-type', result.contentType ?? 'application/json; charset=utf-8')
    }
    if (payload !== undefined) res.setHeader('content-length', Buffer.byteLength(payload))
    res.end(isHead ? undefined : payload)
  }

  const handler: RequestHandler = async (req: Request, res: Response, _next: NextFunction) => {
    const started = performance.now()
    const url = req.originalUrl
    const queryIndex = url.indexOf('?')
    const path = req.path
    // HEAD routes to a documented HEAD operation when there is one, else to the GET operation (sent without body).
    let method = req.method
    if (method === 'HEAD') {
      try {
        if (!api.router.matchOperation({ method: 'HEAD', path, headers: {} } as never)) method = 'GET'
      } catch {
        method = 'GET'
      }
    }
    const state: RequestState<Locals> = {
      req,
      res,
      obRequest: {
        method,
        path,
        query: queryIndex >= 0 ? url.slice(queryIndex + 1) : '',
        headers: req.headers as Record<string, string | string[]>,
      },
      locals: options.createLocals?.() ?? ({} as Locals),
    }
    let result: UnroutedResult
    try {
      result = await route(state)
    } catch (error) {
      if (error instanceof URIError) result = { status: 400, body: errorBody('invalid_request', 'Malformed percent-encoding in the URL.') }
      else {
        try {
          result = mapError(error, state.context)
        } catch (mapperError) {
          logger?.error({ err: mapperError }, 'error mapper failed')
          result = { status: 500, body: errorBody('internal_error', 'Internal error.') }
        }
      }
    }
    const operation = state.operation ? prepared.get(state.operation)?.info : undefined
    if (options.onResponse) {
      const onResponse = options.onResponse
      res.once('finish', () =>
        onResponse({
          operationId: operation?.operationId,
          method: req.method,
          path,
          status: res.statusCode,
          durationMs: performance.now() - started,
          requestBytes: Number(req.headers['content-length'] ?? 0) || 0,
          responseBytes: Number(res.getHeader('content-length') ?? 0) || 0,
        }),
      )
    }
    const streaming = deliver(req, res, result, operation)
    if (streaming) await streaming
  }

  return {
    handler,
    api,
    document,
    operations,
    matchOperation(method: string, path: string) {
      const match = (m: string) => {
        try {
          const op = api.router.matchOperation({ method: m, path, headers: {} } as never)
          return op ? operationsById.get(op.operationId ?? '') : undefined
        } catch {
          return undefined
        }
      }
      return method === 'HEAD' ? (match('HEAD') ?? match('GET')) : match(method)
    },
    send,
    responseValidator,
  }
}
