import type { ErrorObject } from 'ajv'
import type { CompiledOperation, CompiledOperations } from './compileOperations.js'
import { createJsonBodyReader, mediaTypeOf, type ReadJsonBodyParameters } from './readJsonBody.js'
import type { OperationStage, RequestExchange } from './RequestExchange.js'
import { isJsonMediaType } from './ResponseValidator.js'
import { NotImplementedError, RequestNotValidError, UnsupportedMediaTypeError } from './routerRefusals.js'
import type { RequestContext, RequestValidationIssue } from './types.js'
import { isValidatableBody, validateParsedRequest } from './validateParsedRequest.js'

export type RequestValidationStageParameters<Locals extends Record<string, unknown>> = ReadJsonBodyParameters & {
  operations: Pick<CompiledOperations, 'api' | 'validatorsOf'>
  /** Whether an operation has a handler: one without is refused (`NotImplementedError`) before its body is read. */
  isImplemented: (operationId: string) => boolean
  /** Whether to validate this request against the document (default: always). */
  validateRequest?: (context: RequestContext<Locals>) => boolean
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
 * Validation: the JSON body read (only now, once the request is authorised; other media types stay on `raw`
 * for the handler) and the request checked against the document with the operation's compiled validators,
 * fed what the route stage already parsed (`validateParsedRequest`: no second parse). Unknown query parameters
 * are ignored; an undocumented media type is a 415; the query becomes the coerced one.
 */
export function requestValidationStage<Locals extends Record<string, unknown>>(
  parameters: RequestValidationStageParameters<Locals>,
): OperationStage<Locals> {
  const { operations, isImplemented, validateRequest } = parameters
  const readJson = createJsonBodyReader(parameters)
  const validate = (exchange: RequestExchange<Locals>, p: CompiledOperation, ctx: RequestContext<Locals>): Error | undefined => {
    const req = exchange.req
    const media = mediaTypeOf(req.headers)
    const isJson = isJsonMediaType(media)
    const body = isJson ? (req as { body?: unknown }).body : undefined
    ctx.body = body
    if (validateRequest && !validateRequest(ctx)) return undefined
    if (p.nothingToValidate && exchange.query === '' && !isJson) return undefined
    const result =
      p.validation.needsFullValidation || !isValidatableBody(body)
        ? fullValidation(exchange, p, ctx, body)
        : validateParsedRequest(operations.validatorsOf(p), p.validation, { params: ctx.params, query: ctx.query, headers: req.headers, body })
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
      return new UnsupportedMediaTypeError(`Content-Type ${media} is not accepted; use ${documentedMedia.join(' or ')}.`)
    if (errors.length > 0) return new RequestNotValidError(toValidationIssues(errors))
    ctx.query = result.query
    return undefined
  }

  /** openapi-backend's public `validateRequest` (it parses the request again): for what `validateParsedRequest` leaves to it. */
  const fullValidation = (exchange: RequestExchange<Locals>, p: CompiledOperation, ctx: RequestContext<Locals>, body: unknown) => {
    const req = exchange.req
    const result = operations.api.validator.validateRequest(
      { method: p.info.method, path: exchange.path, query: exchange.query, headers: req.headers as Record<string, string | string[]>, body },
      p.operation,
    )
    return { errors: (result.errors ?? null) as ErrorObject[] | null, query: (result.coerced?.query ?? ctx.query) as Record<string, unknown> }
  }

  return (exchange) => {
    const ctx = exchange.context!
    const p = exchange.match as CompiledOperation
    if (!isImplemented(p.info.operationId)) return new NotImplementedError(p.info.operationId)
    const read = readJson(exchange.req, exchange.res)
    if (read === undefined) return validate(exchange, p, ctx)
    if (!(read instanceof Promise)) return read
    return read.then((problem) => problem ?? validate(exchange, p, ctx))
  }
}
