import type { CompiledOperations } from './compileOperations.js'
import { matchOf, type OperationStage, PipelineContext } from './RequestExchange.js'
import { MalformedUrlError, MethodNotAllowedError, NoOperationError } from './routerRefusals.js'

export type RouteStageParameters = {
  operations: Pick<CompiledOperations, 'match' | 'api' | 'allowedMethods'>
}

/**
 * Route: the operation the request's method and path route to (HEAD included, see `compileOperations`), its
 * path and query parameters parsed once through openapi-backend's public `router.parseRequest` (not at all
 * for a literal path without a query string), and the request's one context. A request the document has no
 * operation for is refused here (`NoOperationError`, or `MethodNotAllowedError` when the path exists with other
 * methods), as is a path whose percent-encoding does not decode; the app's on-error renders the refusal.
 */
export function routeStage<Locals extends Record<string, unknown>>({ operations }: RouteStageParameters): OperationStage<Locals> {
  const { api } = operations
  const match = operations.match
  return (exchange) => {
    const matched = matchOf(exchange, match)
    if (typeof matched === 'string') {
      const method = exchange.req.method
      return matched === 'not_found' ? new NoOperationError(method, exchange.path) : new MethodNotAllowedError(method, exchange.path, operations.allowedMethods(exchange.path))
    }
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
        if (error instanceof URIError) return new MalformedUrlError()
        throw error
      }
      params = (parsed.params ?? {}) as Record<string, string>
      query = (parsed.query ?? {}) as Record<string, unknown>
    }
    exchange.context = new PipelineContext<Locals>(matched.info, exchange, params, query)
    return undefined
  }
}
