import type { HandlerContext } from '../types.js'
import { callerOf } from './session.js'

/** The caller's wallet (none for an anonymous request) and the signal a marketplace or model call runs under. */
export const call = (ctx: HandlerContext, signal: AbortSignal = ctx.signal) => {
  const caller = callerOf(ctx)
  return { wallet: 'status' in caller ? undefined : caller.wallet, signal }
}

/** Logs a stream that ended with an error after its 200 went out. */
export const logStreamError = (ctx: HandlerContext) => (error: unknown) =>
  ctx.services.logger.warn({ err: error, operationId: ctx.operationId }, 'stream ended with an error')
