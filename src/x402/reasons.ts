import { ALGORAND_NETWORK } from './networks.js'

/**
 * Wire reason codes of the x402 layer. `error` codes travel in the `{error, message}` body; `reason`
 * codes refine an `invalid_payment` in `details.reason` so a client can tell what to fix.
 */
export const ErrorCodes = {
  emptyBody: 'empty_body',
  invalidMultipart: 'invalid_multipart',
  payloadTooLarge: 'payload_too_large',
  invalidPaymentHeader: 'invalid_payment_header',
  unsupportedNetwork: 'unsupported_network',
  invalidPayment: 'invalid_payment',
  wrongAsset: 'wrong_asset',
  insufficientAmount: 'insufficient_amount',
  wrongReceiver: 'wrong_receiver',
  paymentReplayed: 'payment_replayed',
  requestHashMismatch: 'request_hash_mismatch',
  expiredPayment: 'expired_payment',
  facilitatorUnavailable: 'facilitator_unavailable',
  paymentExpiresTooSoon: 'payment_expires_too_soon',
  settlementOwed: 'settlement_owed',
  ledgerNodeUnavailable: 'ledger_node_unavailable',
  storageUpstreamFailed: 'storage_upstream_failed',
  uploadNotFound: 'upload_not_found',
} as const

export const InvalidPaymentReasons = {
  schemeMismatch: 'scheme_mismatch',
  networkMismatch: 'network_mismatch',
  assetMismatch: 'asset_mismatch',
  payToMismatch: 'pay_to_mismatch',
  receiverMismatch: 'receiver_mismatch',
  amountInsufficient: 'amount_insufficient',
  expired: 'authorization_expired',
  notYetValid: 'authorization_not_yet_valid',
  malformedSignature: 'malformed_signature',
  wrongTransactionType: 'wrong_transaction_type',
  /** A native ALGO payment where no ALGO/USD rate is configured: pay the USDC ASA. */
  nativeAlgoNotAccepted: 'native_algo_not_accepted',
  rejectedByLedger: 'rejected_by_ledger',
  facilitatorRejected: 'facilitator_rejected',
  settlementFailed: 'settlement_failed',
  replayed: 'payment_replayed',
  /** `upto`: the permit names another facilitator than the one the requirement names (only it may settle). */
  facilitatorMismatch: 'facilitator_mismatch',
  /** `upto`: the permit's spender is not x402's `upto` proxy. */
  spenderMismatch: 'spender_mismatch',
  /** The payment expires before the longest call it pays for could be settled (cost calls: see settlementWindow.ts). */
  expiresTooSoon: 'authorization_expires_too_soon',
  /** A settlement of this payer (or session wallet) failed after its call was served and is not reconciled yet. */
  settlementOwed: 'settlement_owed',
  /** EIP-3009: the signature does not recover to `authorization.from` (nor is it the contract wallet's, on chain). */
  invalidSignature: 'invalid_signature',
  /** The payer's balance on chain is below the authorised value. */
  insufficientFunds: 'insufficient_funds',
  /** EIP-3009: the authorization's nonce is already used (or cancelled) on chain. */
  authorizationUsed: 'authorization_used',
  /** `batch-settlement`: the channel names another receiver authorizer than the gateway's key. */
  authorizerMismatch: 'receiver_authorizer_mismatch',
  /** `batch-settlement`: the channel's withdraw delay is not the one the requirement states. */
  withdrawDelayMismatch: 'withdraw_delay_mismatch',
} as const
export type InvalidPaymentReason = (typeof InvalidPaymentReasons)[keyof typeof InvalidPaymentReasons]

export const X402_VERSION = 2
export const HEADER_PAYMENT_REQUIRED = 'PAYMENT-REQUIRED'
export const HEADER_PAYMENT_SIGNATURE = 'PAYMENT-SIGNATURE'
export const HEADER_X_PAYMENT = 'X-PAYMENT'
export const HEADER_PAYMENT_RESPONSE = 'PAYMENT-RESPONSE'
/** The v1 name of PAYMENT-RESPONSE, sent to v1 payers. */
export const HEADER_X_PAYMENT_RESPONSE = 'X-PAYMENT-RESPONSE'
/** Algorand Standard Asset id of USDC accepted on the Algorand rail (seed 2.7). */
export const ALGORAND_USDC_ASSET_ID = ALGORAND_NETWORK.usdcAssetId
