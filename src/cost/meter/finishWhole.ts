import type { HttpResult } from '../../shared/http/index.js'
import type { MeteredCall } from './MeteredCall.js'

/**
 * A whole (JSON) answer: a paid call settles before it is sent — `upto` for the completion tokens its
 * generations produced, as the model server counted them — and a refused settlement withholds it (the 402 with
 * the requirements again, thrown). Then the call is recorded.
 */
export async function finishWhole(call: MeteredCall, result: HttpResult): Promise<HttpResult> {
  call.endDeadline()
  const { usage, billableTokens } = call.budget.totals
  let headers = result.headers
  if (call.paid) {
    let settled: Awaited<ReturnType<MeteredCall['settle']>>
    try {
      // withheld if this settlement fails (a refused one is the 402 again): nothing delivered, nothing owed
      settled = await call.settle(billableTokens, false)
    } catch (error) {
      call.record({ status: call.req.statusOf(error), outcome: 'error', usage, streamed: false, ttftMs: null, settled: false, generationS: null })
      throw error
    }
    headers = { ...(headers ?? {}), ...settled.headers }
  }
  call.record({ status: result.status, outcome: 'ok', usage, streamed: false, ttftMs: null, settled: call.paid !== undefined, generationS: (performance.now() - call.started) / 1000 })
  return { ...result, headers }
}
