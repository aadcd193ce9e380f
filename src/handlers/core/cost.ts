import type { HttpResult } from '../../shared/http/index.js'
import type { Handler, HandlerContext } from '../types.js'
import { callerOf } from './session.js'

/** Cost endpoints: a session and one unit of the wallet's daily quota (402 `quota_exceeded` past it). */
export const cost =
  (run: (ctx: HandlerContext) => Promise<unknown>): Handler =>
  costResult(async (ctx) => ({ status: 200, body: await run(ctx) }))

/**
 * `cost` for handlers that shape their own result (streams). A stream that started counts as a call. The
 * shadow overlord has no quota (seed 000 §4.2).
 */
export const costResult =
  (run: (ctx: HandlerContext) => Promise<HttpResult>): Handler =>
  async (ctx) => {
    const caller = callerOf(ctx)
    if ('status' in caller) return caller
    if (caller.tier === 'overlord') return run(ctx)
    const wallet = caller.wallet
    await ctx.services.quota.consume(wallet)
    try {
      const result = await run(ctx)
      // An answered refusal or failure (the /llm/v1 proxy returns the model server's) is not a call either.
      if (result.status >= 400) await ctx.services.quota.refund(wallet)
      return result
    } catch (error) {
      // A call that failed (model server down, unknown model, no cabinet) does not count against the quota.
      await ctx.services.quota.refund(wallet)
      throw error
    }
  }

