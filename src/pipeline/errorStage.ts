import { asDatabaseUnavailable, DatabaseUnavailableError } from '../db/DatabaseUnavailableError.js'
import type { ErrorMapping } from '../handlers/types.js'
import type { OperationInfo, RequestContext, RequestExchange, UnroutedResult } from '../shared/http/index.js'
import type { Logger } from '../shared/logger.js'
import { errorShapeOf } from './shapedAuthRequired.js'
import { shapedRefusal } from './shapedRefusal.js'

export type ErrorStageOptions<Locals extends Record<string, unknown>> = {
  /** The operation a request routes to, for a refusal before the route (the rate limit's 429): `router.routeOf`. */
  routeOf?: ((exchange: RequestExchange<Locals>) => OperationInfo | undefined) | undefined
  /** The document's operations: those of another API family (`x-error-shape`) get their refusals in its shape. */
  operations?: readonly OperationInfo[] | undefined
}

/**
 * A thrown error → the spec's error body, through the one error catalogue, in the shape the route declares (the
 * gateway's `Error`, or OpenAI's / Anthropic's on their routes: `shapedRefusal`). Anything the catalogue does not
 * know is a bug: logged with its stack, answered 500 without detail (no paths, no internals) — unless it is the
 * database being unavailable (`isDatabaseUnavailable`: busy, I/O, disk full, connection lost), answered 503
 * `database_unavailable` with `Retry-After`.
 */
export function errorStage<Locals extends Record<string, unknown> = Record<string, unknown>>(
  logger: Logger,
  catalogue: ErrorMapping,
  options: ErrorStageOptions<Locals> = {},
): (error: unknown, ctx: Pick<RequestContext, 'operationId'> | undefined, exchange?: RequestExchange<Locals>) => UnroutedResult {
  const shapes = new Map((options.operations ?? []).flatMap((operation) => {
    const shape = errorShapeOf(operation.definition)
    return shape ? [[operation.operationId, shape] as const] : []
  }))
  return (error, ctx, exchange) => {
    // Not a bug of the request's path: the database cannot serve now (503 with Retry-After); the operator is told.
    // Errors the catalogue has a row for of their own are answered as they are (a credential that could not be checked).
    const known = catalogue.toResult(error)
    const unavailable = known && !(error instanceof DatabaseUnavailableError) ? undefined : asDatabaseUnavailable(error)
    const mapped = known ?? (unavailable && catalogue.toResult(unavailable))
    if (unavailable) logger.error({ err: error, operationId: ctx?.operationId }, 'database unavailable')
    else if (!mapped) logger.error({ err: error, operationId: ctx?.operationId }, 'unhandled error')
    const result = mapped ?? { status: 500, body: { error: 'internal_error', message: 'internal error' } }
    const operationId = ctx?.operationId ?? (exchange && options.routeOf?.(exchange)?.operationId)
    const shape = operationId === undefined ? undefined : shapes.get(operationId)
    // only the plain `Error` body is reshaped: a body the error brought of its own (the gate's 401) is the route's already
    return shape && (mapped === undefined || mapped.component === 'Error') ? shapedRefusal(shape, result, error) : result
  }
}
