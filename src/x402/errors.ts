import { BaseError } from '../shared/errors/BaseError.js'
import { ErrorCodes, type InvalidPaymentReason, InvalidPaymentReasons } from './reasons.js'

/** 400: the payment header could not be decoded (bad base64, bad JSON, missing or mistyped fields). */
export class PaymentHeaderInvalidError extends BaseError<'invalid_payment_header'> {
  override name = 'PaymentHeaderInvalidError'
  constructor(what: string) {
    super(ErrorCodes.invalidPaymentHeader, `malformed payment header: ${what}`)
  }
}

/** 400 `unsupported network <network>` (seed 4.6 step 4). */
export class UnsupportedNetworkError extends BaseError<'unsupported_network'> {
  override name = 'UnsupportedNetworkError'
  constructor(readonly network: string) {
    super(ErrorCodes.unsupportedNetwork, `unsupported network ${network}`)
  }
}

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
export class PaymentReplayedError extends BaseError<'payment_replayed'> {
  override name = 'PaymentReplayedError'
  constructor(message = 'this payment was already used: one payment buys one upload or one call') {
    super(ErrorCodes.paymentReplayed, message)
  }
}

/** 402: the Algorand note is not the SHA-256 of the request binding. */
export class RequestHashMismatchError extends BaseError<'request_hash_mismatch'> {
  override name = 'RequestHashMismatchError'
  constructor() {
    super(
      ErrorCodes.requestHashMismatch,
      'transaction note is not SHA-256(<resource_url>|<sha256_hex>|<size_bytes>|<price_usd>) of this request',
    )
  }
}

/** 402: the Algorand transaction was not confirmed within the polling window (or `why`: it never can be). */
export class ExpiredPaymentError extends BaseError<'expired_payment'> {
  override name = 'ExpiredPaymentError'
  constructor(txId: string, seconds: number, why?: string) {
    super(ErrorCodes.expiredPayment, `transaction ${txId} ${why ?? `was not confirmed within ${seconds} s`}`)
  }
}

/** 502: the facilitator could not be reached or answered garbage. Nothing was settled by us. */
export class FacilitatorUnavailableError extends BaseError<'facilitator_unavailable'> {
  override name = 'FacilitatorUnavailableError'
  /** True when the request never left (connection refused, unknown host): it cannot have had an effect. */
  readonly beforeSend: boolean
  constructor(step: string, cause?: unknown, { beforeSend = false }: { beforeSend?: boolean } = {}) {
    super(ErrorCodes.facilitatorUnavailable, `payment facilitator failed during ${step}`, { cause })
    this.beforeSend = beforeSend
  }
}

/** 502: the Algorand node could not be reached. */
export class LedgerNodeUnavailableError extends BaseError<'ledger_node_unavailable'> {
  override name = 'LedgerNodeUnavailableError'
  constructor(cause?: unknown) {
    super(ErrorCodes.ledgerNodeUnavailable, 'Algorand node unavailable', { cause })
  }
}

/**
 * 502 (designed): the settlement was broadcast and is still unconfirmed after x402's one retry
 * (`settlement_pending`). The payment stays claimed (never usable again) and its recovery decides from the chain.
 */
export class SettlementPendingError extends BaseError<'settlement_pending'> {
  override name = 'SettlementPendingError'
  constructor(readonly transaction: string) {
    super('settlement_pending', `the settlement ${transaction || '(no transaction yet)'} is broadcast and not confirmed yet; the payment is kept for reconciliation and cannot be used again`)
  }
}
