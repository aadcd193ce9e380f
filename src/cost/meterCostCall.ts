import { type CostQuota, QuotaExceededError } from '../auth/CostQuota.js'
import type { HttpResult } from '../shared/http/index.js'
import type { Logger } from '../shared/logger.js'
import { InvalidPaymentError } from '../x402/index.js'
import { type CallUsage, StreamUsageScanner, usageOf } from './callUsage.js'
import { CostPayments, type PaidCall, paymentResponseHeader } from './CostPayments.js'
import type { LlmMetrics } from './LlmMetrics.js'
import type { CallOutcome, PaidBy, UsageLedger } from './UsageLedger.js'

export type CostMeterDeps = {
  quota: CostQuota
  payments: CostPayments
  usage: UsageLedger
  metrics: LlmMetrics
  logger: Logger
  /** HTTP status of an error a call threw (the error catalogue's), for the usage record. */
  statusOf: (error: unknown) => number
  /** Model of a call whose request and answer name none. */
  defaultModel: string
}

export type CostCallRequest = {
  wallet: string
  /** The client's network (`src/shared/addressRange.ts`), counted by the quota beside the wallet. */
  network?: string | undefined
  /** The shadow overlord: no quota, nothing to pay (seed 000 §4.2). */
  overlord: boolean
  headers: Record<string, string | string[] | undefined>
  /** operationId. */
  route: string
  method: string
  path: string
  /** `model` of the request body, when it names one. */
  model: string | undefined
  /** Aborted when the client goes away (the call's own signal follows it). */
  signal?: AbortSignal | undefined
  /**
   * The call has no effect but the model server's work (a proxied or streamed model call), so it may start
   * while its quota unit is being taken, and be stopped when the quota refuses it (see `meterCostCall`).
   */
  startBeforeQuota?: boolean | undefined
}

/**
 * The call itself. `signal` is the one to give the model-server request: it is aborted when the client goes
 * away and when a call started before its quota unit was secured is refused (`undefined`: none to give).
 * `limits.maxTokens`: the most completion tokens the call may produce (an `upto` payment's maximum ÷ the
 * price per token); the caller caps the model request with it.
 */
export type CostCallRun = (signal: AbortSignal | undefined, limits?: { maxTokens: number }) => Promise<HttpResult>

/**
 * One cost call, metered (issue 14 items 3 and 4): who pays for it, then the call, then its record.
 *
 * - Paid for by one unit of the wallet's daily quota; past it, 402 with x402 v2 requirements (when paying is
 *   configured; else 402 `quota_exceeded` as before). A request carrying `PAYMENT-SIGNATURE`/`X-PAYMENT` is
 *   paid by that payment instead, quota or not: the payment is verified and claimed before the call runs.
 * - A call that fails before producing output (throws, answers ≥ 400, or a stream whose first line is an
 *   error) gives its quota unit back and releases its payment claim unsettled.
 * - **When a paid call settles**: a whole (JSON) answer, after the call succeeded and before the answer is
 *   sent; a stream, as soon as the model server produced its first chunk and before that chunk is sent. No
 *   output reaches the client unpaid, and a settlement that fails answers 402 (or 502 when the facilitator
 *   failed) instead of the output. A stream that breaks after its first chunk stays paid: output was produced.
 * - **x402 `upto`** (issue 31 item 3): verified and claimed before the call like `exact`, the generation capped
 *   at the tokens the maximum pays for, but settled once the call ended — a whole answer before it is sent, a
 *   stream after its last chunk went out or the client went away — for the completion tokens produced (a
 *   stream cut short: the pieces of generated content sent, one token each, framing events never — see
 *   `contentPieces.ts`). A stream's settlement cannot ride in its headers (already sent): it is in the usage
 *   ledger, `GET /llm/usage` and the `llm.call.paid` event; a settlement that fails then is logged and the
 *   payment stays claimed (`settle_unknown`).
 * - Every call is recorded in the usage ledger (tokens, durations, outcome, the payment) when it ends — a
 *   stream when its last chunk went out or the client went away — and observed in the LLM metrics. Both happen
 *   just after the response's last bytes are written (a SQLite commit blocks the event loop; it must not hold
 *   back the end of the stream). The record's disk sync is off the event loop (`createBackgroundCommit`): the
 *   caller's next call is not held back by it.
 * - **Time to first token** (`startBeforeQuota`): the quota unit is a database commit (on SQLite an fsync that
 *   blocks the event loop), so a call that only asks the model server is started first and the unit taken while
 *   the model server works. Nothing of its answer is passed on before the unit is secured: the answer (or the
 *   stream) is only looked at once `consume` succeeded. Refused (quota used up, or the store failed), the call
 *   is aborted at once — the model-server request is closed, so it stops generating — and the answer is the
 *   same 402 / `quota_exceeded` as without the head start. A wallet this instance already saw at its limit
 *   gets no head start (its calls would only make the model server work for nothing). Paid calls (a payment
 *   header) keep the order payment → call: a payment payload must never start model work it does not pay for.
 */
export async function meterCostCall(deps: CostMeterDeps, req: CostCallRequest, run: CostCallRun): Promise<HttpResult> {
  const started = performance.now()
  const info = { wallet: req.wallet, route: req.route, method: req.method, path: req.path }
  let paidBy: PaidBy
  let paid: PaidCall | undefined
  /** The call, when it was started before its quota unit was secured. */
  let early: { running: Promise<HttpResult>; controller: AbortController } | undefined
  if (req.overlord) paidBy = 'overlord'
  else if (deps.payments.enabled && CostPayments.offered(req.headers)) {
    try {
      paid = await deps.payments.begin(req.headers, info)
    } catch (error) {
      if (error instanceof InvalidPaymentError) return deps.payments.refused(info, error)
      throw error
    }
    paidBy = 'payment'
  } else {
    if (req.startBeforeQuota && deps.quota.likelyAvailable(req.wallet)) {
      early = startEarly(run, req.signal)
      // The request must be on the wire before the commit: better-sqlite3 is synchronous, and its fsync would
      // hold the write back. Everything before the model-server request is synchronous or a microtask (SQLite
      // reads, the pool's choice), and node:http writes a request on a kept-alive connection in a nextTick, so
      // one turn of the event loop is enough. (On PostgreSQL the commit is a round trip that overlaps anyway.)
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
    try {
      await deps.quota.consume(req.wallet, req.network)
    } catch (error) {
      if (early) abandon(early)
      if (error instanceof QuotaExceededError && deps.payments.enabled) {
        return deps.payments.paymentRequired(info, { code: error.code, message: error.shortMessage, details: error.meta })
      }
      throw error
    }
    paidBy = 'quota'
  }

  const giveBack = async () => {
    if (paid) await paid.release()
    else if (paidBy === 'quota') await deps.quota.refund(req.wallet, req.network)
  }
  const record = (r: RecordInput) => {
    const durationMs = performance.now() - started
    // After the response's last bytes are written (every nextTick and microtask of this turn): the ledger's
    // commit blocks the event loop on SQLite.
    setImmediate(write, r, durationMs)
  }
  const write = (r: RecordInput, durationMs: number) => {
    const model = r.usage.model ?? req.model ?? deps.defaultModel
    const prompt = r.usage.promptTokens ?? 0
    const completion = r.usage.completionTokens ?? 0
    const evalS = r.usage.evalSeconds ?? r.generationS
    deps.metrics.observeCall({
      model,
      paidBy,
      outcome: r.outcome,
      ttftS: r.ttftMs === null ? null : r.ttftMs / 1000,
      tokensPerS: evalS && evalS > 0 && completion > 0 ? completion / evalS : null,
      promptTokens: prompt,
      completionTokens: completion,
    })
    deps.usage
      .record({
        wallet: req.wallet,
        route: req.route,
        model,
        promptTokens: prompt,
        completionTokens: completion,
        durationMs,
        ttftMs: r.ttftMs,
        streamed: r.streamed,
        outcome: r.outcome,
        status: r.status,
        paidBy,
        paymentId: r.settled && paid ? paid.paymentId : null,
        // `upto`: the amount settled, not the maximum
        amountAtomic: r.settled && paid ? paid.amountAtomic : null,
      })
      .catch((error: unknown) => deps.logger.error({ err: error, route: req.route }, 'usage ledger: a cost call could not be recorded'))
  }
  /** A refused settlement answers the requirements again (the output is withheld); anything else is thrown. */
  const settleOrAnswer = async (tokens = 0): Promise<{ headers: Record<string, string> } | HttpResult> => {
    try {
      // the answer is withheld when this settlement fails: nothing was delivered, so nothing is owed
      return { headers: paymentResponseHeader(await (paid as PaidCall).settle(tokens, { delivered: false })) }
    } catch (error) {
      if (error instanceof InvalidPaymentError) return deps.payments.paymentRequired(info, { code: error.code, message: error.shortMessage })
      throw error
    }
  }

  let result: HttpResult
  try {
    result = await (early ? early.running : run(req.signal, paid?.metered ? { maxTokens: paid.metered.maxTokens } : undefined))
  } catch (error) {
    await giveBack()
    record({ status: deps.statusOf(error), outcome: 'error', usage: {}, streamed: false, ttftMs: null, settled: false, generationS: null })
    throw error
  }
  if (result.status >= 400) {
    await giveBack()
    record({ status: result.status, outcome: 'error', usage: usageOf(result.body), streamed: false, ttftMs: null, settled: false, generationS: null })
    return result
  }

  if (!result.stream) {
    const usage = usageOf(result.body)
    let headers = result.headers
    if (paid) {
      let settled: Awaited<ReturnType<typeof settleOrAnswer>>
      try {
        settled = await settleOrAnswer(usage.completionTokens ?? 0)
      } catch (error) {
        record({ status: deps.statusOf(error), outcome: 'error', usage, streamed: false, ttftMs: null, settled: false, generationS: null })
        throw error
      }
      if ('status' in settled) {
        record({ status: settled.status, outcome: 'error', usage, streamed: false, ttftMs: null, settled: false, generationS: null })
        return settled
      }
      headers = { ...(headers ?? {}), ...settled.headers }
    }
    record({ status: result.status, outcome: 'ok', usage, streamed: false, ttftMs: null, settled: paid !== undefined, generationS: (performance.now() - started) / 1000 })
    return { ...result, headers }
  }

  // ── a stream ──
  const scanner = new StreamUsageScanner()
  const iterator = result.stream[Symbol.asyncIterator]()
  let first: IteratorResult<string | Uint8Array> | undefined
  let firstAt: number | undefined
  let headers = result.headers
  let settled = false
  if (paid) {
    try {
      first = await iterator.next()
    } catch (error) {
      await giveBack()
      record({ status: deps.statusOf(error), outcome: 'error', usage: {}, streamed: true, ttftMs: null, settled: false, generationS: null })
      throw error
    }
    firstAt = performance.now()
    if (!first.done) scanner.feed(first.value)
    if (first.done || scanner.errored) {
      // No output (the stream failed at once): not settled, the payload may be used again.
      await giveBack()
    } else if (paid.metered) {
      // `upto`: settled after the last byte, for what was produced (below).
    } else {
      let answer: Awaited<ReturnType<typeof settleOrAnswer>>
      try {
        answer = await settleOrAnswer()
      } catch (error) {
        await iterator.return?.(undefined)
        record({ status: deps.statusOf(error), outcome: 'error', usage: scanner.usage, streamed: true, ttftMs: null, settled: false, generationS: null })
        throw error
      }
      if ('status' in answer) {
        await iterator.return?.(undefined)
        record({ status: answer.status, outcome: 'error', usage: scanner.usage, streamed: true, ttftMs: null, settled: false, generationS: null })
        return answer
      }
      settled = true
      headers = { ...(headers ?? {}), ...answer.headers }
    }
  }
  const meteredStream = paid?.metered !== undefined && first !== undefined && !first.done && !scanner.errored
  const stream = tap(iterator, first, firstAt, scanner, req.signal, (end) => {
    const ttftMs = end.firstAt === undefined ? null : end.firstAt - started
    const generationS = end.firstAt === undefined ? null : (performance.now() - end.firstAt) / 1000
    // No usage reported (cut by the client, or the model server failed): the pieces of content it sent, one
    // token each — never its framing events (`contentPiecesOf`).
    const usage = { ...end.usage, completionTokens: end.usage.completionTokens ?? end.contentPieces }
    if (!meteredStream) {
      record({ status: result.status, outcome: end.outcome, usage, streamed: true, ttftMs, settled, generationS })
      return
    }
    // `upto`, after the last byte: the tokens the stream reported, or (cut short) the content pieces it sent.
    ;(paid as PaidCall).settle(usage.completionTokens).then(
      () => record({ status: result.status, outcome: end.outcome, usage, streamed: true, ttftMs, settled: true, generationS }),
      (error: unknown) => {
        deps.logger.error({ err: error, payment_id: (paid as PaidCall).paymentId, route: req.route }, 'upto settlement after a stream failed: the call was served unpaid')
        record({ status: result.status, outcome: 'error', usage, streamed: true, ttftMs, settled: false, generationS })
      },
    )
  })
  return { ...result, headers, stream }
}

type RecordInput = { status: number; outcome: CallOutcome; usage: CallUsage; streamed: boolean; ttftMs: number | null; settled: boolean; generationS: number | null }

/** Starts `run` with a signal of its own that follows the client's; its failure is handled where it is awaited. */
function startEarly(run: CostCallRun, client: AbortSignal | undefined): { running: Promise<HttpResult>; controller: AbortController } {
  const controller = new AbortController()
  if (client?.aborted) controller.abort(client.reason)
  else client?.addEventListener('abort', () => controller.abort(client.reason), { once: true })
  let running: Promise<HttpResult>
  try {
    running = run(controller.signal)
  } catch (error) {
    running = Promise.reject(error)
  }
  // Awaited only once the quota answered: until then a failure must not count as unhandled.
  running.catch(() => {})
  return { running, controller }
}

/**
 * A call started before its quota unit, refused: its model-server request is closed at once (the model server
 * stops generating), and a stream it may already have is read out — it ends at once with the cut connection —
 * so every layer under it lets go (connections, the pool's in-flight count). Nothing of it reaches the client.
 */
function abandon(early: { running: Promise<HttpResult>; controller: AbortController }): void {
  early.controller.abort()
  void early.running
    .then(async (result) => {
      if (result.stream) for await (const _ of result.stream) void _
    })
    .catch(() => {})
}

type StreamEnd = { outcome: CallOutcome; usage: CallUsage; contentPieces: number; firstAt: number | undefined }

/** Passes every chunk on untouched, reading usage on the way; reports once when the stream ends or is dropped. */
async function* tap(
  iterator: AsyncIterator<string | Uint8Array>,
  first: IteratorResult<string | Uint8Array> | undefined,
  firstAt: number | undefined,
  scanner: StreamUsageScanner,
  client: AbortSignal | undefined,
  onEnd: (end: StreamEnd) => void,
): AsyncGenerator<string | Uint8Array> {
  let outcome: CallOutcome = 'cancelled'
  let at = firstAt
  /** Suspended at a `yield`: an error thrown in there comes from the consumer (the client went away). */
  let handedOut = false
  let unread: string | Uint8Array | undefined
  try {
    if (first) {
      if (first.done) {
        outcome = 'error'
        return
      }
      handedOut = true
      yield first.value
      handedOut = false
    }
    for (;;) {
      const next = await iterator.next()
      if (next.done) break
      at ??= performance.now()
      // Handed on before it is read: the usage scan (a JSON.parse per event) runs once the chunk is written,
      // off the path of the first token. A chunk handed on and never resumed after is read in `finally`.
      unread = next.value
      handedOut = true
      yield next.value
      handedOut = false
      scanner.feed(unread)
      unread = undefined
    }
    scanner.end()
    outcome = scanner.errored || scanner.chunks === 0 ? 'error' : 'ok'
  } catch (error) {
    // A consumer that destroys its stream (`Readable.from` under `pipeline`, when the client disconnects) throws
    // into the generator instead of returning it: that is a cancellation, not a failure of the call. So is the
    // model-server request failing because the client went away (its signal aborts that request, which can
    // happen before the consumer returns the stream).
    if (!handedOut && !client?.aborted) outcome = 'error'
    throw error
  } finally {
    if (unread !== undefined) scanner.feed(unread)
    if (outcome === 'cancelled') await iterator.return?.(undefined)
    onEnd({ outcome, usage: scanner.usage, contentPieces: scanner.contentPieces, firstAt: at })
  }
}
