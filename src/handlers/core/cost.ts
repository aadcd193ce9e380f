import { capGeneration, type GenerationLimitField } from '../../cost/capGeneration.js'
import { meterCostCall } from '../../cost/meterCostCall.js'
import { addressRange } from '../../shared/addressRange.js'
import type { HttpResult } from '../../shared/http/index.js'
import { errorToResult } from '../errorCatalogue.js'
import type { Handler, HandlerContext } from '../types.js'
import { callerOf } from './session.js'

/** Cost endpoints: a session and one unit of the wallet's daily quota, or an x402 payment past it. */
export const cost =
  (run: (ctx: HandlerContext) => Promise<unknown>): Handler =>
  costResult(async (ctx) => ({ status: 200, body: await run(ctx) }))

/**
 * `cost` for handlers that shape their own result (streams). Metering — quota, payment, settlement, the
 * usage ledger and the LLM metrics — is `src/cost/meterCostCall.ts`. The shadow overlord has no quota
 * (seed 000 §4.2). `run` gets the signal to give the model server (the client's, or one that also stops a call
 * its quota refused). `startBeforeQuota`: the handler does nothing but ask the model server (no write, no
 * other effect), so its call may start while the quota unit is taken — the gateway's time to first token.
 * `generationLimit`: the body field that limits its completion tokens; an x402 `upto` payment caps it at the
 * tokens its maximum pays for (a route without one is still never charged more than that maximum).
 */
export const costResult =
  (
    run: (ctx: HandlerContext, signal: AbortSignal) => Promise<HttpResult>,
    options: { startBeforeQuota?: boolean; generationLimit?: GenerationLimitField } = {},
  ): Handler =>
  async (ctx) => {
    const caller = callerOf(ctx)
    if ('status' in caller) return caller
    const { quota, costPayments, usage, llmMetrics, logger, config } = ctx.services
    const model = (ctx.body as { model?: unknown } | undefined)?.model
    return meterCostCall(
      {
        quota,
        payments: costPayments,
        usage,
        metrics: llmMetrics,
        logger,
        statusOf: (error) => errorToResult(error)?.status ?? 500,
        defaultModel: config.modelServer.chatModel,
      },
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
        startBeforeQuota: options.startBeforeQuota,
      },
      (signal, limits) => {
        if (limits && options.generationLimit) ctx.body = capGeneration(ctx.body, options.generationLimit, limits.maxTokens)
        return run(ctx, signal ?? ctx.signal)
      },
    )
  }
