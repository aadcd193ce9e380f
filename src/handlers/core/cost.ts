import type { MeteredModelServer } from '../../cost/meter/index.js'
import { addressRange } from '../../shared/addressRange.js'
import type { HttpResult } from '../../shared/http/index.js'
import { errorsOf } from '../errorCatalogue.js'
import type { Handler, HandlerContext } from '../types.js'
import { requireCaller } from './session.js'

/** Cost endpoints: a session and one unit of the wallet's daily quota, or an x402 payment past it. */
export const cost =
  (run: (ctx: HandlerContext, server: MeteredModelServer) => Promise<unknown>): Handler =>
  costResult(async (ctx, server) => ({ status: 200, body: await run(ctx, server) }))

export type CostOptions = {
  /**
   * The handler does nothing but ask the model server (no write, no other effect), so its call may start while
   * the quota unit is taken — the gateway's time to first token.
   */
  startBeforeQuota?: boolean
  /** A check that costs no quota and takes no payment (`POST /llm/test`): still metered and recorded. */
  free?: boolean
  /** The most completion tokens one call of the route may generate, whoever pays. */
  maxTokens?: number
}

/**
 * `cost` for handlers that shape their own result (streams). Every route that makes the model server generate
 * or embed is one of these: the meter (`src/cost/meter/`) takes the quota or the payment, hands `run` the
 * call's model server — capped at what the payment pays for, counted, ended when the client goes or the
 * payment's time is up — and settles and records the call. The shadow overlord has no quota (seed 000 §4.2).
 */
export const costResult =
  (run: (ctx: HandlerContext, server: MeteredModelServer) => Promise<HttpResult>, options: CostOptions = {}): Handler =>
  async (ctx) => {
    const caller = requireCaller(ctx)
    const { meter, config } = ctx.services
    const model = (ctx.body as { model?: unknown } | undefined)?.model
    return meter.call(
      {
        wallet: caller.wallet,
        network: addressRange(ctx.ip, config.quota.networkWidth),
        overlord: caller.tier === 'overlord',
        headers: ctx.headers,
        route: ctx.operationId,
        method: ctx.method,
        path: ctx.path,
        model: typeof model === 'string' ? model : undefined,
        signal: ctx.signal,
        statusOf: (error) => errorsOf(ctx).statusOf(error),
        startBeforeQuota: options.startBeforeQuota,
        free: options.free,
        maxTokens: options.maxTokens,
      },
      (server) => run(ctx, server),
    )
  }
