import type { MeteredModelServer } from '../../cost/meter/index.js'
import type { HandlerContext } from '../types.js'
import { callerOf } from './session.js'

/** The caller's wallet (none for an anonymous request) and the call's metered model server. */
export const call = (ctx: HandlerContext, server: MeteredModelServer) => {
  return { wallet: callerOf(ctx)?.wallet, server }
}

/**
 * Logs a stream that ended with an error after its 200 went out: a warning, unless its client had gone — the
 * model server's stream was then cut on purpose (the generation stops with the client), which is no fault.
 */
export const logStreamError = (ctx: HandlerContext) => (error: unknown) => {
  if (ctx.signal.aborted) ctx.services.logger.debug({ err: error, operationId: ctx.operationId }, 'stream ended: the client went away')
  else ctx.services.logger.warn({ err: error, operationId: ctx.operationId }, 'stream ended with an error')
}
