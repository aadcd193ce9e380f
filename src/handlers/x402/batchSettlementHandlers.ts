import { BatchSettlementNotOfferedError } from '../../x402/batch/BatchSettlement.js'
import type { Handler } from '../types.js'

/** `GET /x402/batch-settlement/refund`: the payer's unused deposit back (the 402 with the terms without a payment). */
export const refundBatchChannel: Handler = async (ctx) => {
  const answer = await ctx.services.costPayments.refundBatch(ctx.headers, { method: 'GET', path: '/x402/batch-settlement/refund' })
  return { status: answer.status, body: answer.body, headers: { ...answer.headers, 'Cache-Control': 'no-store' } }
}

/** `POST /x402/batch-settlement/claims` (overlord bearer): the claim job now, on every chain. */
export const claimBatchVouchers: Handler = async (ctx) => {
  const batch = ctx.services.batchSettlement
  if (!batch) throw new BatchSettlementNotOfferedError()
  return { status: 200, body: { chains: await batch.claims.run() } }
}
