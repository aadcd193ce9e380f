import { type CostQuota, QuotaExceededError } from '../../auth/CostQuota.js'
import type { HttpResult } from '../../shared/http/index.js'
import type { Logger } from '../../shared/logger.js'
import { InvalidPaymentError } from '../../x402/index.js'
import { CostPayments, type PaidCall } from '../CostPayments.js'
import type { LlmMetrics } from '../LlmMetrics.js'
import type { UsageLedger } from '../UsageLedger.js'
import { finishStream } from './finishStream.js'
import { finishWhole } from './finishWhole.js'
import { MeteredCall, type Payer, type Running } from './MeteredCall.js'
import type { MeteredModelServer, ModelServerPort } from './MeteredModelServer.js'

export type MeterDeps = {
  pool: ModelServerPort
  quota: CostQuota
  payments: CostPayments
  usage: UsageLedger
  metrics: LlmMetrics
  logger: Logger
  /** Model of a call whose request and answer name none. */
  defaultModel: string
}

export type MeteredCallRequest = {
  wallet: string
  /** The client's network (`src/shared/addressRange.ts`), counted by the quota beside the wallet. */
  network?: string | undefined
  /** The shadow overlord: no quota, nothing to pay (seed 000 §4.2). */
  overlord: boolean
  headers: Record<string, string | string[] | undefined>
  /** operationId (`mcpCall` for an MCP tool call). */
  route: string
  method: string
  path: string
  /** `model` of the request body, when it names one. */
  model: string | undefined
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined
  /** HTTP status of an error the call threw (the error catalogue's), for the usage record. */
  statusOf: (error: unknown) => number
  /**
   * The call has no effect but the model server's work (a proxied or streamed model call), so it may start
   * while its quota unit is being taken, and be stopped when the quota refuses it.
   */
  startBeforeQuota?: boolean | undefined
  /** A check that costs no quota and takes no payment (`POST /llm/test`): still capped and recorded. */
  free?: boolean | undefined
  /** The most completion tokens the route lets one call generate, whoever pays (summed over its generations). */
  maxTokens?: number | undefined
}

/** The call itself, given the model server it may use: the call's own, with its budget. */
export type MeteredRun = (server: MeteredModelServer) => Promise<HttpResult>

/**
 * The one meter of every call that makes the model server generate or embed — every HTTP route, every MCP
 * tool, every agent run. It owns who pays (the quota of the wallet and of its network, an x402 payment, or
 * nobody), the cap that payment allows (summed over all generations of the call), the count of the tokens
 * generated (the model server's own), the usage ledger and the settlement. The call gets the model server only
 * from here (`MeteredModelServer`); only this folder imports the model-server client (`.dependency-cruiser.cjs`).
 *
 * - Paid for by one unit of the wallet's (and its network's) daily quota; past it, 402 with x402 v2
 *   requirements (when paying is configured; else 402 `quota_exceeded`). A request carrying a payment is paid
 *   by it instead, quota or not: verified and claimed before the call runs.
 * - A call that fails before producing output (throws, answers ≥ 400, or a stream whose first line is an
 *   error) gives its quota unit back and releases its payment claim unsettled.
 * - `exact` settles a whole answer before it is sent and a stream at its first chunk, before that chunk is
 *   sent: no output reaches the client unpaid; a refused settlement answers 402 instead.
 * - `upto` caps every generation at its share of the tokens the payment pays for, ends the call before the
 *   payment must be settled (`settleDeadlineMs`), and settles ⌈tokens × price⌉ once it ended: the model
 *   server's count, never an estimate. A stream the client leaves is read to its end for that count; a
 *   generation that never gets one (cut at the deadline, the model server failed) pays its whole share —
 *   never less than it served, never more than authorised.
 * - Every call is recorded in the usage ledger and the LLM metrics just after its last bytes are written.
 * - **Time to first token** (`startBeforeQuota`): the quota unit is a database commit, so a call that only asks
 *   the model server is started first and the unit taken while the model server works; nothing of its answer
 *   is looked at before the unit is secured. Refused, the call is aborted at once (the model server stops). A
 *   wallet this instance already saw at its limit gets no head start. A paid call keeps the order payment →
 *   call: a payment payload never starts model work it does not pay for.
 */
export class Meter {
  readonly #deps: MeterDeps

  constructor(deps: MeterDeps) {
    this.#deps = deps
  }

  async call(req: MeteredCallRequest, run: MeteredRun): Promise<HttpResult> {
    const deps = this.#deps
    if (req.overlord || req.free) return this.#run(new MeteredCall(deps, req, { paidBy: req.overlord ? 'overlord' : 'free' }), run)
    if (deps.payments.enabled && CostPayments.offered(req.headers)) {
      const info = { wallet: req.wallet, route: req.route, method: req.method, path: req.path }
      let paid: PaidCall
      try {
        paid = await deps.payments.begin(req.headers, info)
      } catch (error) {
        if (error instanceof InvalidPaymentError) throw deps.payments.refused(info, error)
        throw error
      }
      return this.#run(new MeteredCall(deps, req, { paidBy: 'payment', paid }), run)
    }
    return this.#quotaCall(req, run)
  }

  async #run(call: MeteredCall, run: MeteredRun, running?: Running): Promise<HttpResult> {
    let result: HttpResult
    try {
      result = await (running ?? call.start(run))
    } catch (error) {
      return call.failed(error)
    }
    if (result.status >= 400) {
      call.endDeadline()
      await call.giveBack()
      // ended at its payment's deadline: the 402 saying so (thrown, rendered by the catalogue), not what the cut left
      const refusal = call.cut ? call.refusalOf(undefined) : undefined
      call.record({ status: refusal ? call.req.statusOf(refusal) : result.status, outcome: 'error', usage: call.budget.totals.usage, streamed: false, ttftMs: null, settled: false, generationS: null })
      if (refusal) throw refusal
      return result
    }
    if (!result.stream) return finishWhole(call, result)
    call.delivering()
    return finishStream(call, result)
  }

  /** Paid by a unit of the daily quota (started before the unit is secured when it only asks the model server). */
  async #quotaCall(req: MeteredCallRequest, run: MeteredRun): Promise<HttpResult> {
    const deps = this.#deps
    const early = req.startBeforeQuota === true && deps.quota.likelyAvailable(req.wallet)
    const payer: Payer = { paidBy: 'quota' }
    const call = new MeteredCall(deps, req, payer, { early })
    let running: Running | undefined
    if (early) {
      running = call.start(run)
      // The request must be on the wire before the commit: better-sqlite3 is synchronous, and its fsync would
      // hold the write back. Everything before the model-server request is synchronous or a microtask (SQLite
      // reads, the pool's choice), and node:http writes a request on a kept-alive connection in a nextTick, so
      // one turn of the event loop is enough. (On PostgreSQL the commit is a round trip that overlaps anyway.)
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
    try {
      await deps.quota.consume(req.wallet, req.network)
    } catch (error) {
      if (running) call.abandon(running)
      if (error instanceof QuotaExceededError && deps.payments.enabled) {
        throw deps.payments.refusal(call.info, { code: error.code, message: error.shortMessage, details: error.meta })
      }
      throw error
    }
    return this.#run(call, run, running)
  }
}
