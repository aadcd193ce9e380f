import type { OperationStage } from './RequestExchange.js'
import type { OperationHandler } from './types.js'

/**
 * Handler: the operation's handler called with the request's validated context; its result is the response
 * (validated by the response stage before it is sent). Operations without a handler were answered 501 by the
 * validation stage, before their body was read.
 */
export function operationHandlerStage<Locals extends Record<string, unknown>>(
  handlers: ReadonlyMap<string, OperationHandler<Locals>>,
): OperationStage<Locals> {
  return (exchange) => {
    const ctx = exchange.context!
    return handlers.get(ctx.operationId)!(ctx)
  }
}
