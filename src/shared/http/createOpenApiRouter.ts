import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestHandler } from 'express'
import type { Document, OpenAPIBackend } from 'openapi-backend'
import type { Logger } from '../logger.js'
import { compileOperations, RouterSetupError } from './compileOperations.js'
import { operationHandlerStage } from './operationHandlerStage.js'
import { type ErrorAnswerer, matchOf, type OperationStage, type RequestExchange, type UnroutedResult } from './RequestExchange.js'
import { requestValidationStage } from './requestValidationStage.js'
import { ResponseValidator } from './ResponseValidator.js'
import { type ResponseValidationMode, responseValidationStage } from './responseValidationStage.js'
import { routeStage } from './routeStage.js'
import { type ResponseInfo, runOperationStages } from './runOperationStages.js'
import { securityRequirementsStage } from './securityRequirementsStage.js'
import { splitStages, type Stage, stageNames } from './Stage.js'
import type {
  HttpResult,
  OperationHandler,
  OperationInfo,
  RequestContext,
  ResponseValidationReport,
} from './types.js'

export { RouterSetupError } from './compileOperations.js'
export type { ErrorAnswerer, UnroutedResult } from './RequestExchange.js'
export { toValidationIssues } from './requestValidationStage.js'
export type { ResponseValidationMode } from './responseValidationStage.js'
export type { ResponseInfo } from './runOperationStages.js'

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
  unauthorized?: (context: RequestContext<Locals>) => HttpResult | Error | Promise<HttpResult | Error>
  /** An error a security handler threw that fails the request whatever else is satisfied (see `securityRequirementsStage`). */
  failsRequest?: (error: unknown) => boolean
  /**
   * Response for an error a stage threw or gave back: a handler's, or one of the router's own refusals
   * (`routerRefusals.ts`: no route, no method, an invalid request or body). Default: the router's refusals in the
   * plain error body with their statuses (`routerRefusalRows`), anything else 500 `internal_error`.
   */
  mapError?: ErrorAnswerer<Locals>
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
  /** Deepest nesting of arrays/objects accepted in a JSON body (default 32; deeper → `invalid_json`). */
  jsonMaxDepth?: number
  logger?: Logger
}

/** The operation stages this router builds from its options, to be listed by the app (`pipeline`). */
export type OpenApiStages<Locals extends Record<string, unknown>> = {
  /** The operation a request routes to (HEAD included), its parameters parsed once, its context; refused otherwise. */
  route: OperationStage<Locals>
  /** The operation's security requirements against `securityHandlers`; `unauthorized` otherwise. */
  security: OperationStage<Locals>
  /** An operation without handler refused, the JSON body read, the request validated against the document. */
  validation: OperationStage<Locals>
  /** The operation's handler. */
  handler: OperationStage<Locals>
  /** `respond`: every answer validated against the document and sent (the list's respond entry). */
  respond: Stage<Locals>
}

export type OpenApiRouter<Locals extends Record<string, unknown> = Record<string, unknown>> = {
  /** Express middleware running route → security → validation → handler (then response validation; errors mapped). */
  handler: RequestHandler
  /** The stages `handler` runs, for an app that lists its own (with a gate before the route, say). */
  stages: OpenApiStages<Locals>
  /**
   * Runs the list's steps in order, answers through its `respond` entry and maps errors with its `on-error` entry
   * (see `Stage`); a list without one of these uses the router's options (`mapError`, `onResponse`).
   */
  pipeline(...stages: (Stage<Locals> | OperationStage<Locals>)[]): RequestHandler
  /** The operation an exchange's request routes to (matched once per request, whichever stage asks first). */
  routeOf(exchange: RequestExchange<Locals>): OperationInfo | undefined
  /** openapi-backend as loaded (public API: `getOperations`, `router.parseRequest`, `validator.*`). */
  api: OpenAPIBackend
  /** The dereferenced document. */
  document: Document
  operations: OperationInfo[]
  /** The operation a method and raw path route to, if any (HEAD: the HEAD operation, else the GET one). */
  matchOperation(method: string, path: string): OperationInfo | undefined
  /** Validates a result against the document and sends it — for responses produced outside the router. */
  send(req: IncomingMessage, res: ServerResponse, result: UnroutedResult, operation?: OperationInfo): Promise<void>
  responseValidator: ResponseValidator
}

/**
 * The OpenAPI part of the request pipeline, as stages over one loaded document (`compileOperations`):
 * route → security → validation → handler, then response validation, with errors mapped to responses.
 * `handler` runs them in that order; an app with stages of its own in between lists them with `pipeline`.
 * JSON bodies are read only once the request is authorised; any other media type (multipart,
 * octet-stream) is left on `raw` for the handler.
 */
export function createOpenApiRouter<Locals extends Record<string, unknown> = Record<string, unknown>>(
  options: OpenApiRouterOptions<Locals>,
): OpenApiRouter<Locals> {
  const compiled = compileOperations(options.document)
  const responseValidator = new ResponseValidator(compiled.document as never)
  const handlersById = new Map<string, OperationHandler<Locals>>()
  for (const [operationId, handler] of Object.entries(options.handlers)) {
    if (!handler) continue
    if (!compiled.byId.has(operationId)) throw new RouterSetupError(`Handler for unknown operationId ${operationId}`)
    handlersById.set(operationId, handler)
  }
  const respond = responseValidationStage({
    responseValidator,
    mode: options.responseValidation ?? 'error',
    onResponseValidationError: options.onResponseValidationError,
    logger: options.logger,
  })
  const stages: OpenApiStages<Locals> = {
    route: routeStage<Locals>({ operations: compiled }),
    security: securityRequirementsStage<Locals>(options),
    validation: requestValidationStage<Locals>({
      operations: compiled,
      isImplemented: (operationId) => handlersById.has(operationId),
      validateRequest: options.validateRequest,
      jsonLimit: options.jsonLimit,
      jsonMaxDepth: options.jsonMaxDepth,
    }),
    handler: operationHandlerStage<Locals>(handlersById),
    respond: { kind: 'respond', name: 'respond', run: respond },
  }
  const infoOf = (match: ReturnType<typeof compiled.match>) => (typeof match === 'string' ? undefined : match.info)
  const routeOf = (exchange: RequestExchange<Locals>) => infoOf(matchOf(exchange, compiled.match))
  const pipeline = (...list: (Stage<Locals> | OperationStage<Locals>)[]) => {
    const split = splitStages(list)
    return runOperationStages<Locals>({
      middlewares: split.middlewares,
      stages: split.steps,
      names: stageNames(list),
      respond: split.respond ?? respond,
      mapError: split.onError ?? options.mapError,
      onResponse: split.onResponse ?? options.onResponse,
      routeOf,
      createLocals: options.createLocals,
      logger: options.logger,
    })
  }

  return {
    handler: pipeline(stages.route, stages.security, stages.validation, stages.handler),
    stages,
    pipeline,
    routeOf,
    api: compiled.api,
    document: compiled.document,
    operations: compiled.operations,
    matchOperation: (method, path) => infoOf(compiled.match(method, path)),
    send: async (req, res, result, operation) => {
      await respond(req, res, result, operation)
    },
    responseValidator,
  }
}
