import type { CallUsage } from '../callUsage.js'
import type { LlmMetrics } from '../LlmMetrics.js'
import type { CallOutcome, PaidBy, UsageLedger } from '../UsageLedger.js'
import type { Logger } from '../../shared/logger.js'

/** How one call ended, for the usage ledger and the LLM metrics. */
export type CallRecord = {
  status: number
  outcome: CallOutcome
  usage: CallUsage
  streamed: boolean
  ttftMs: number | null
  /** The payment was settled (its id and the amount settled go in the record). */
  settled: boolean
  generationS: number | null
}

export type RecordTarget = {
  usage: UsageLedger
  metrics: LlmMetrics
  logger: Logger
  defaultModel: string
}

export type RecordedCall = {
  wallet: string
  route: string
  /** `model` of the request, when it named one. */
  model: string | undefined
  paidBy: PaidBy
  payment: { paymentId: string; amountAtomic: bigint } | undefined
  durationMs: number
}

/** Writes one call's record: the LLM metrics and the usage ledger row (its commit off the caller's way). */
export function recordCall(target: RecordTarget, call: RecordedCall, r: CallRecord): void {
  const model = r.usage.model ?? call.model ?? target.defaultModel
  const prompt = r.usage.promptTokens ?? 0
  const completion = r.usage.completionTokens ?? 0
  const evalS = r.usage.evalSeconds ?? r.generationS
  target.metrics.observeCall({
    model,
    paidBy: call.paidBy,
    outcome: r.outcome,
    ttftS: r.ttftMs === null ? null : r.ttftMs / 1000,
    tokensPerS: evalS && evalS > 0 && completion > 0 ? completion / evalS : null,
    promptTokens: prompt,
    completionTokens: completion,
  })
  target.usage
    .record({
      wallet: call.wallet,
      route: call.route,
      model,
      promptTokens: prompt,
      completionTokens: completion,
      durationMs: call.durationMs,
      ttftMs: r.ttftMs,
      streamed: r.streamed,
      outcome: r.outcome,
      status: r.status,
      paidBy: call.paidBy,
      paymentId: r.settled && call.payment ? call.payment.paymentId : null,
      // `upto`: the amount settled, not the maximum
      amountAtomic: r.settled && call.payment ? call.payment.amountAtomic : null,
    })
    .catch((error: unknown) => target.logger.error({ err: error, route: call.route }, 'usage ledger: a cost call could not be recorded'))
}
