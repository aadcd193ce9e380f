import { InvalidPaymentError } from './errors.js'
import { InvalidPaymentReasons } from './reasons.js'

/**
 * How long before a payment's deadline its settlement must be submitted, in seconds. The reference
 * facilitators refuse a payment with less than 6 s left (the settlement transaction must be mined before the
 * deadline: Permit2 and EIP-3009 both check it on chain); the rest is the way to the facilitator and its queue.
 */
export const SETTLE_MARGIN_S = 15

/** Room the offered validity leaves for the client to sign and send, and for clocks that differ a little (s). */
const SIGN_AND_SEND_S = 30

/**
 * What a payment for a call that settles after it ran must cover: it is accepted only when its deadline is at
 * least `minValidityS` away — the longest the call may run (`maxCallS`) plus the settlement margin — so a
 * call that runs to its limit is still settled before the deadline. The requirement offers `offeredTimeoutS`
 * (its `maxTimeoutSeconds`: stock x402 clients sign `deadline`/`validBefore` = now + that), which leaves room
 * to sign and send.
 */
export type PaymentWindow = { maxCallS: number; settleMarginS: number; minValidityS: number; offeredTimeoutS: number }

export function paymentWindow(maxCallS: number): PaymentWindow {
  const minValidityS = maxCallS + SETTLE_MARGIN_S
  return { maxCallS, settleMarginS: SETTLE_MARGIN_S, minValidityS, offeredTimeoutS: minValidityS + SIGN_AND_SEND_S }
}

/**
 * Refuses a payment whose deadline (`field`, epoch seconds) is less than the window's minimum validity away:
 * 402 `payment_expires_too_soon`, the minimum in the message and in `details`. (A deadline already passed, or
 * under 6 s away, is the rail's own `authorization_expired`.)
 */
export function assertCoversWindow(deadline: bigint, window: PaymentWindow, nowSeconds: number, field: string): void {
  const left = deadline - BigInt(nowSeconds)
  if (left >= BigInt(window.minValidityS)) return
  throw new InvalidPaymentError(
    InvalidPaymentReasons.expiresTooSoon,
    `${field} is ${left} s away; a payment here must stay valid at least ${window.minValidityS} s after it arrives (the longest call, ${window.maxCallS} s, plus ${window.settleMarginS} s to settle): sign it with maxTimeoutSeconds ${window.offeredTimeoutS} as offered`,
    { min_validity_s: window.minValidityS, valid_for_s: Number(left), max_call_s: window.maxCallS, settle_margin_s: window.settleMarginS },
  )
}

/** The latest wall-clock time (ms) at which a settlement of a payment valid until `deadline` (s) can still be submitted. */
export function settleDeadlineMs(deadline: bigint, window: Pick<PaymentWindow, 'settleMarginS'>): number {
  return Number(deadline) * 1000 - window.settleMarginS * 1000
}
