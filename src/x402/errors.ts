import { BaseError } from '../shared/errors/BaseError.js'
import { defineError } from '../shared/errors/defineError.js'
import { ErrorCodes, type InvalidPaymentReason, InvalidPaymentReasons } from './reasons.js'

/** 400: the payment header could not be decoded (bad base64, bad JSON, missing or mistyped fields). */
export const PaymentHeaderInvalidError = defineError('PaymentHeaderInvalidError', ErrorCodes.invalidPaymentHeader, (what: string) => `malformed payment header: ${what}`)
export type PaymentHeaderInvalidError = InstanceType<typeof PaymentHeaderInvalidError>

/** 400 `unsupported network <network>` (seed 4.6 step 4). */
export const UnsupportedNetworkError = defineError('UnsupportedNetworkError', ErrorCodes.unsupportedNetwork, (network: string) => ({ message: `unsupported network ${network}`, fields: { network } }))
export type UnsupportedNetworkError = InstanceType<typeof UnsupportedNetworkError>

export type PaymentRejectionCode = 'invalid_payment' | 'wrong_asset' | 'insufficient_amount' | 'wrong_receiver' | 'payment_expires_too_soon' | 'settlement_owed' | typeof BATCH_CUMULATIVE_MISMATCH

/**
 * x402 `batch-settlement`: the voucher's running total is not the server's. The 402 carries this code itself (the
 * scheme's clients resynchronise from the channel state it carries, and they recognise it by this code).
 */
export const BATCH_CUMULATIVE_MISMATCH = 'invalid_batch_settlement_evm_cumulative_amount_mismatch'

/**
 * The 402 code for a reason: the designed `wrong_asset`, `insufficient_amount`, `wrong_receiver`,
 * `payment_expires_too_soon` (sign a longer validity) and `settlement_owed` (settle the debt first), else
 * `invalid_payment`.
 */
export function rejectionCode(reason: string): PaymentRejectionCode {
  switch (reason) {
    case InvalidPaymentReasons.expiresTooSoon:
      return 'payment_expires_too_soon'
    case InvalidPaymentReasons.settlementOwed:
      return 'settlement_owed'
    case InvalidPaymentReasons.assetMismatch:
    case InvalidPaymentReasons.nativeAlgoNotAccepted:
      return 'wrong_asset'
    case InvalidPaymentReasons.amountInsufficient:
      return 'insufficient_amount'
    case InvalidPaymentReasons.receiverMismatch:
    case InvalidPaymentReasons.payToMismatch:
      return 'wrong_receiver'
    case BATCH_CUMULATIVE_MISMATCH:
      return BATCH_CUMULATIVE_MISMATCH
    default:
      return 'invalid_payment'
  }
}

/**
 * 402 payment rejected: `invalid_payment` (or a designed, more precise code), with a reason in `meta.reason`
 * and, for the designed codes, what the client needs to fix it in `meta` too (`details` of the 402).
 */
export class InvalidPaymentError extends BaseError<PaymentRejectionCode> {
  override name = 'InvalidPaymentError'
  constructor(
    readonly reason: InvalidPaymentReason | string,
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(rejectionCode(reason), message, { meta: { ...details, reason } })
  }
}

/** 409 (designed): this payment — (network, payer, nonce) or its settlement tx — was already used, on any paid route. */
export const PaymentReplayedError = defineError(
  'PaymentReplayedError',
  ErrorCodes.paymentReplayed,
  (message: string = 'this payment was already used: one payment buys one upload or one call') => message,
)
export type PaymentReplayedError = InstanceType<typeof PaymentReplayedError>

/** 402: the Algorand note is not the SHA-256 of the request binding. */
export const RequestHashMismatchError = defineError(
  'RequestHashMismatchError',
  ErrorCodes.requestHashMismatch,
  () => 'transaction note is not SHA-256(<resource_url>|<sha256_hex>|<size_bytes>|<price_usd>) of this request',
)
export type RequestHashMismatchError = InstanceType<typeof RequestHashMismatchError>

/** 402: the Algorand transaction was not confirmed within the polling window (or `why`: it never can be). */
export const ExpiredPaymentError = defineError(
  'ExpiredPaymentError',
  ErrorCodes.expiredPayment,
  (txId: string, seconds: number, why?: string) => `transaction ${txId} ${why ?? `was not confirmed within ${seconds} s`}`,
)
export type ExpiredPaymentError = InstanceType<typeof ExpiredPaymentError>

/** 502: the facilitator could not be reached or answered garbage. Nothing was settled by us. */
export const FacilitatorUnavailableError = defineError(
  'FacilitatorUnavailableError',
  ErrorCodes.facilitatorUnavailable,
  // `beforeSend`: the request never left (connection refused, unknown host), so it cannot have had an effect
  (step: string, cause?: unknown, { beforeSend = false }: { beforeSend?: boolean } = {}) => ({ message: `payment facilitator failed during ${step}`, cause, fields: { beforeSend } }),
)
export type FacilitatorUnavailableError = InstanceType<typeof FacilitatorUnavailableError>

/** 502: the Algorand node could not be reached. */
export const LedgerNodeUnavailableError = defineError('LedgerNodeUnavailableError', ErrorCodes.ledgerNodeUnavailable, (cause?: unknown) => ({ message: 'Algorand node unavailable', cause }))
export type LedgerNodeUnavailableError = InstanceType<typeof LedgerNodeUnavailableError>

/**
 * 502 (designed): the settlement was broadcast and is still unconfirmed after x402's one retry
 * (`settlement_pending`). The payment stays claimed (never usable again) and its recovery decides from the chain.
 */
export const SettlementPendingError = defineError('SettlementPendingError', 'settlement_pending', (transaction: string) => ({
  message: `the settlement ${transaction || '(no transaction yet)'} is broadcast and not confirmed yet; the payment is kept for reconciliation and cannot be used again`,
  fields: { transaction },
}))
export type SettlementPendingError = InstanceType<typeof SettlementPendingError>
