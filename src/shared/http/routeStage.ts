import type { CompiledOperations } from './compileOperations.js'
import { errorBody, matchOf, type OperationStage, PipelineContext, type RequestExchange, type UnroutedResult } from './RequestExchange.js'
import type { UnroutedRequest } from './types.js'

export type RouteStageParameters = {
  operations: Pick<CompiledOperations, 'match' | 'api' | 'allowedMethods'>
  /** Response for a path or method the document does not have (default 404 `not_found` / 405 `method_not_allowed`). */
  unrouted?: (request: UnroutedRequest) => UnroutedResult | Promise<UnroutedResult>
}

/**
 * Route: the operation the request's method and path route to (HEAD included, see `compileOperations`), its
 * path and query parameters parsed once through openapi-backend's public `router.parseRequest` (not at all
 * for a literal path without a query string), and the request's one context. A request the document has no
 * operation for is answered here: 404, or 405 when the path exists with other methods.
 */
export function routeStage<Locals extends Record<string, unknown>>({ operations, unrouted }: RouteStageParameters): OperationStage<Locals> {
  const { api } = operations
  const match = operations.match
  return (exchange) => {
    const matched = matchOf(exchange, match)
    if (typeof matched === 'string') return answerUnrouted(matched, exchange, unrouted, operations.allowedMethods)
    let params: Record<string, string>
    let query: Record<string, unknown>
    if (matched.literalPath && exchange.query === '') {
      params = {}
      query = {}
    } else {
      let parsed
      try {
        parsed = api.router.parseRequest({ method: matched.info.method, path: exchange.path, query: exchange.query, headers: {} }, matched.operation)
      } catch (error) {
        if (error instanceof URIError) return { status: 400, body: errorBody('invalid_request', 'Malformed percent-encoding in the URL.') }
        throw error
      }
      params = (parsed.params ?? {}) as Record<string, string>
      query = (parsed.query ?? {}) as Record<string, unknown>
    }
    exchange.context = new PipelineContext<Locals>(matched.info, exchange, params, query)
    return undefined
  }
}

/** A 405 names the methods the path has (RFC 9110 §15.5.6), whoever wrote its body. */
function withAllow(result: UnroutedResult, allowed: () => string[]): UnroutedResult {
  if (result.status !== 405 || Object.keys(result.headers ?? {}).some((name) => name.toLowerCase() === 'allow')) return result
  return { ...result, headers: { ...result.headers, Allow: allowed().join(', ') } }
}

function answerUnrouted<Locals extends Record<string, unknown>>(
  reason: UnroutedRequest['reason'],
  exchange: RequestExchange<Locals>,
  unrouted: RouteStageParameters['unrouted'],
  allowedMethods: (path: string) => string[],
): UnroutedResult | Promise<UnroutedResult> {
  const req = exchange.req
  const request: UnroutedRequest = { reason, method: req.method, path: exchange.path, url: req.originalUrl, headers: req.headers, ip: req.ip ?? '', raw: req }
  const allowed = () => allowedMethods(exchange.path)
  if (unrouted) {
    const result = unrouted(request)
    return result instanceof Promise ? result.then((r) => withAllow(r, allowed)) : withAllow(result, allowed)
  }
  return reason === 'not_found'
    ? { status: 404, body: errorBody('not_found', `No route for ${request.method} ${request.path}.`) }
    : withAllow({ status: 405, body: errorBody('method_not_allowed', `${request.method} is not allowed on ${request.path}.`) }, allowed)
}
