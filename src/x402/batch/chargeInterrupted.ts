import type { ChannelStorage } from '@x402/evm/batch-settlement/server'

/** A voucher whose call's instance died before the charge was committed. */
export type InterruptedVoucher = {
  channelId: string
  /** The voucher's running total (what the payer signed: the charged total then + `stepAtomic`). */
  voucherTotal: bigint
  /** The requirement's amount when the voucher was verified: the most the call could cost. */
  stepAtomic: bigint
  /** What the call served by its last checkpoint (≤ `stepAtomic`); 0 charges nothing. */
  chargeAtomic: bigint
}

/**
 * `charged`: the channel's charged total grew by the charge (the claim jobs claim it with the voucher the channel
 * holds). `moved`: the channel is not where the voucher left it (refunded, closed, record lost) — nothing is
 * charged, ever: a charge can only ride on the voucher the payer signed for this call.
 */
export type InterruptedCharge = 'charged' | 'moved'

/**
 * Commits the charge of a `batch-settlement` call whose instance died mid-stream (`InterruptedCalls`), as the
 * scheme's own settle would have: the charged total grows by the charge and the call's reservation of the
 * channel ends. Only when the channel still holds this call's voucher and its charged total is still the one the
 * voucher was signed on (charged + step = the voucher's total): the payer's running total cannot be pushed past
 * what it signed, and a voucher is charged once (a second take finds the total moved on). The reservation is the
 * dead call's own (no other call can reserve a channel whose next voucher total is taken in `cost_payments`), so
 * it is ended before its TTL runs out and the payer's next voucher (the new charged total + the step) is served.
 */
export async function chargeInterrupted(storage: ChannelStorage, v: InterruptedVoucher): Promise<InterruptedCharge> {
  if (v.chargeAtomic < 0n || v.chargeAtomic > v.stepAtomic) throw new Error(`a charge of ${v.chargeAtomic} outside 0..${v.stepAtomic}`)
  let outcome: InterruptedCharge = 'moved'
  await storage.updateChannel(v.channelId, (current) => {
    outcome = 'moved'
    if (!current) return current
    if (BigInt(current.signedMaxClaimable) !== v.voucherTotal || BigInt(current.chargedCumulativeAmount) + v.stepAtomic !== v.voucherTotal) return current
    outcome = 'charged'
    const { pendingRequest: _, ...rest } = current
    return { ...rest, chargedCumulativeAmount: (BigInt(current.chargedCumulativeAmount) + v.chargeAtomic).toString(), lastRequestTimestamp: Date.now() }
  })
  return outcome
}
