import type { FacilitatorSettleResponse } from './FacilitatorClient.js'
import type { Facilitator } from './FacilitatorPool.js'
import type { PaymentPayload } from './headers.js'

/** x402's reason for a settlement broadcast but not confirmed yet (its transaction is in `transaction`). */
export const SETTLEMENT_PENDING = 'settlement_pending'

/** A settle answer that says the settlement is on its way: broadcast, not confirmed yet. */
export function isSettlementPending(settled: Pick<FacilitatorSettleResponse, 'success' | 'errorReason'>): boolean {
  return settled.success !== true && settled.errorReason === SETTLEMENT_PENDING
}

/**
 * One settlement as x402 (2.24) settles it: the facilitator's answer, except that a `settlement_pending` answer —
 * the transaction broadcast, its confirmation not yet seen — is followed by exactly one retry with the identical
 * payload, which the facilitator reconciles against the broadcast it remembers (it never broadcasts a second
 * one). A retry that does not confirm it — pending again, refused, or not answered — leaves the first answer: the
 * caller keeps the payment claimed (it may land) and leaves it to its recovery, which reads the chain. Transport
 * errors of the first call are thrown as the facilitator pool throws them.
 */
export async function settleWithPendingRetry(facilitator: Facilitator, paymentPayload: PaymentPayload, paymentRequirements: unknown, x402Version: 1 | 2 = 2): Promise<FacilitatorSettleResponse> {
  const first = await facilitator.settle(paymentPayload, paymentRequirements, x402Version)
  if (!isSettlementPending(first)) return first
  // Only a confirmation decides: a retry that fails or cannot be sent does not undo the first broadcast, which
  // may still land, so the answer stays the first one (pending, with its transaction).
  const second = await facilitator.settle(paymentPayload, paymentRequirements, x402Version).catch(() => undefined)
  return second?.success === true ? second : first
}
