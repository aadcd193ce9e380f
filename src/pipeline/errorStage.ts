import type { ErrorMapping } from '../handlers/types.js'
import type { HttpResult, RequestContext } from '../shared/http/index.js'
import type { Logger } from '../shared/logger.js'

/**
 * A handler's thrown error → the spec's error body, through the one error catalogue. Anything the catalogue
 * does not know is a bug: logged with its stack, answered 500 without detail (no paths, no internals).
 */
export function errorStage(logger: Logger, catalogue: ErrorMapping): (error: unknown, ctx: RequestContext | undefined) => HttpResult {
  return (error, ctx) => {
    const mapped = catalogue.toResult(error)
    if (mapped) return mapped
    logger.error({ err: error, operationId: ctx?.operationId }, 'unhandled error')
    return { status: 500, body: { error: 'internal_error', message: 'internal error' } }
  }
}
