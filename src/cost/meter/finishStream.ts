import type { HttpResult } from '../../shared/http/index.js'
import type { PaidCall } from '../CostPayments.js'
import { StreamUsageScanner } from '../callUsage.js'
import type { MeteredCall } from './MeteredCall.js'
import { type StreamEnd, streamTap } from './streamTap.js'

type Chunk = IteratorResult<string | Uint8Array>

/**
 * A streamed answer. A paid call reads its first chunk before answering: none, or an error first, and the
 * payment is released (nothing was produced); `exact` settles then, before that chunk is sent (no output
 * unpaid; a refused settlement answers 402 instead of it); `upto` settles once the stream ended (`settleAfter`).
 */
export async function finishStream(call: MeteredCall, result: HttpResult): Promise<HttpResult> {
  const iterator = (result.stream as AsyncIterable<string | Uint8Array>)[Symbol.asyncIterator]()
  let first: Chunk | undefined
  let firstAt: number | undefined
  let headers = result.headers
  let settled = false
  if (call.paid) {
    try {
      first = await iterator.next()
    } catch (error) {
      return call.failed(error)
    }
    firstAt = performance.now()
    if (first.done || errorFirst(first)) {
      // No output (the stream failed at once): not settled, the payload may be used again.
      if (call.cut) {
        await iterator.return?.(undefined)
        return call.failed(undefined)
      }
      await call.giveBack()
    } else if (!call.paid.metered) {
      const answer = await settleFirst(call, iterator)
      settled = true
      headers = { ...(headers ?? {}), ...answer.headers }
    }
  }
  const failedAtOnce = first !== undefined && (first.done === true || errorFirst(first))
  const metered = call.paid?.metered !== undefined && first !== undefined && !failedAtOnce
  const stream = streamTap({ iterator, first, firstAt, client: call.req.signal, onEnd: (end) => void ended(call, end, { metered, settled, failedAtOnce, status: result.status }) })
  return { ...result, headers, stream }
}

function errorFirst(first: Chunk): boolean {
  if (first.done) return false
  const scanner = new StreamUsageScanner()
  scanner.feed(first.value)
  return scanner.errored
}

/** `exact`: settled before the first chunk is sent; refused (a thrown 402), the stream is closed unsent. */
async function settleFirst(call: MeteredCall, iterator: AsyncIterator<string | Uint8Array>): Promise<{ headers: Record<string, string> }> {
  call.endDeadline()
  try {
    return await call.settle(0, false)
  } catch (error) {
    await iterator.return?.(undefined)
    call.record({ status: call.req.statusOf(error), outcome: 'error', usage: call.budget.totals.usage, streamed: true, ttftMs: null, settled: false, generationS: null })
    throw error
  }
}

/**
 * The stream ended (or the client left): once every generation has its count — a stream the client left, paid
 * per token, is read to the model server's count first — an `upto` payment settles the tokens produced (a
 * generation without a count: its whole share), and the call is recorded. The settlement cannot ride in the
 * stream's headers (sent long ago): it is in the usage ledger, `GET /llm/usage` and the `llm.call.paid` event.
 */
async function ended(call: MeteredCall, end: StreamEnd, o: { metered: boolean; settled: boolean; failedAtOnce: boolean; status: number }): Promise<void> {
  const ttftMs = end.firstAt === undefined ? null : end.firstAt - call.started
  const generationS = end.firstAt === undefined ? null : (performance.now() - end.firstAt) / 1000
  await call.budget.whenIdle()
  call.endDeadline()
  const { usage, billableTokens, failed } = call.budget.totals
  const outcome = end.outcome === 'ok' && (failed || o.failedAtOnce) ? 'error' : end.outcome
  if (!o.metered) {
    call.record({ status: o.status, outcome, usage, streamed: true, ttftMs, settled: o.settled, generationS })
    return
  }
  const paid = call.paid as PaidCall
  try {
    await paid.settle(billableTokens)
    call.record({ status: o.status, outcome, usage, streamed: true, ttftMs, settled: true, generationS })
  } catch (error) {
    call.deps.logger.error({ err: error, payment_id: paid.paymentId, route: call.req.route }, 'upto settlement after a stream failed')
    call.record({ status: o.status, outcome: 'error', usage, streamed: true, ttftMs, settled: false, generationS })
  }
}
