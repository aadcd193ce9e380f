import { isSettlementPending, settleWithPendingRetry } from '../../settleWithPendingRetry.js'
import { InvalidPaymentError, PaymentHeaderInvalidError, SettlementPendingError } from '../../errors.js'
import type { FacilitatorSettleResponse } from '../../FacilitatorClient.js'
import type { Facilitator } from '../../FacilitatorPool.js'
import type { DecodedPaymentHeader, PaymentPayload } from '../../headers.js'
import { InvalidPaymentReasons } from '../../reasons.js'
import type { PaymentRequirement } from '../../requirements.js'
import { v1NetworkName } from '../../v1Networks.js'

export type EvmAuthorization = {
  from: string
  to: string
  value: bigint
  validAfter: bigint
  validBefore: bigint
  nonce: string
}

export type EvmPayment = { signature: string; authorization: EvmAuthorization }

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const UINT = /^\d{1,78}$/
const NONCE = /^0x[0-9a-fA-F]{64}$/

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Structural decode of an EIP-3009 `exact` payload. Missing or mistyped fields → 400. */
export function parseEvmPayment(payload: PaymentPayload): EvmPayment {
  const p = payload.payload
  if (typeof p.signature !== 'string') throw new PaymentHeaderInvalidError('missing field payload.signature (string)')
  if (!isObject(p.authorization)) throw new PaymentHeaderInvalidError('missing field payload.authorization (object)')
  const a = p.authorization
  for (const field of ['from', 'to'] as const) {
    if (typeof a[field] !== 'string' || !ADDRESS.test(a[field] as string)) {
      throw new PaymentHeaderInvalidError(`payload.authorization.${field} must be a 0x address`)
    }
  }
  const uint = (field: 'value' | 'validAfter' | 'validBefore'): bigint => {
    const v = a[field]
    const text = typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : v
    if (typeof text !== 'string' || !UINT.test(text)) {
      throw new PaymentHeaderInvalidError(`payload.authorization.${field} must be a non-negative integer string`)
    }
    return BigInt(text)
  }
  if (typeof a.nonce !== 'string' || !NONCE.test(a.nonce)) {
    throw new PaymentHeaderInvalidError('payload.authorization.nonce must be 32 bytes as 0x hex')
  }
  return {
    signature: p.signature,
    authorization: {
      from: a.from as string,
      to: a.to as string,
      value: uint('value'),
      validAfter: uint('validAfter'),
      validBefore: uint('validBefore'),
      nonce: (a.nonce as string).toLowerCase(),
    },
  }
}

const sameAddress = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase()

/**
 * Local checks before the facilitator is asked anything: network, asset, payTo, amount ≥ price,
 * validity window, well-formed signature. Throws 402 `invalid_payment` with a reason.
 */
export function precheckEvmPayment(
  payload: PaymentPayload,
  payment: EvmPayment,
  requirement: PaymentRequirement,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): void {
  const accepted = payload.accepted
  const fail = (reason: string, message: string): never => {
    throw new InvalidPaymentError(reason, message)
  }
  if (accepted.scheme !== undefined && accepted.scheme !== 'exact') {
    fail(InvalidPaymentReasons.schemeMismatch, `scheme ${String(accepted.scheme)} is not accepted; use exact`)
  }
  if (accepted.network !== requirement.network) fail(InvalidPaymentReasons.networkMismatch, 'network differs from the requirement')
  if (accepted.asset !== undefined && !sameAddress(accepted.asset, requirement.asset)) {
    fail(InvalidPaymentReasons.assetMismatch, `asset must be ${requirement.asset} on ${requirement.network}`)
  }
  if (accepted.payTo !== undefined && !sameAddress(accepted.payTo, requirement.payTo)) {
    fail(InvalidPaymentReasons.payToMismatch, `payTo must be ${requirement.payTo}`)
  }
  if (!sameAddress(payment.authorization.to, requirement.payTo)) {
    fail(InvalidPaymentReasons.receiverMismatch, `authorization.to must be ${requirement.payTo}`)
  }
  if (payment.authorization.value < BigInt(requirement.amount)) {
    fail(
      InvalidPaymentReasons.amountInsufficient,
      `authorization.value ${payment.authorization.value} is below the price ${requirement.amount}`,
    )
  }
  // The reference facilitator wants at least 6 s of validity left for the settlement transaction.
  if (payment.authorization.validBefore <= BigInt(nowSeconds + 6)) {
    fail(InvalidPaymentReasons.expired, 'authorization.validBefore is not in the future')
  }
  if (payment.authorization.validAfter > BigInt(nowSeconds)) {
    fail(InvalidPaymentReasons.notYetValid, 'authorization.validAfter is in the future')
  }
  // ECDSA 65 bytes; longer (ERC-1271/6492 smart-wallet) signatures are hex too.
  if (!/^0x[0-9a-fA-F]+$/.test(payment.signature) || payment.signature.length < 132 || payment.signature.length % 2 !== 0) {
    fail(InvalidPaymentReasons.malformedSignature, 'payload.signature is not a 0x hex signature of at least 65 bytes')
  }
}

/**
 * What the facilitator is sent: ours, with the amount the payer actually authorised (≥ price). For a v1
 * payment, the payload as the payer sent it and the requirement in v1 terms, so the facilitator runs its v1
 * scheme. The network and scheme both carry are the requirement's — the one the pre-check passed — never
 * a name the payer wrote elsewhere in the payload.
 */
export function facilitatorRequest(decoded: Pick<DecodedPaymentHeader, 'version' | 'payload' | 'raw'>, requirement: PaymentRequirement, payment: EvmPayment) {
  const value = payment.authorization.value.toString()
  const paymentRequirements = { ...requirement, amount: value, maxAmountRequired: value }
  if (decoded.version === 1) {
    const v1Network = v1NetworkName(requirement.network) ?? requirement.network
    const paymentPayload = { ...(decoded.raw as PaymentPayload), scheme: requirement.scheme, network: v1Network }
    return { x402Version: 1 as const, paymentPayload, paymentRequirements: { ...paymentRequirements, network: v1Network } }
  }
  return { x402Version: 2 as const, paymentPayload: decoded.payload, paymentRequirements }
}

export type EvmSettlement = { payer: string; transaction: string; network: string; response: FacilitatorSettleResponse }

/** Facilitator `/verify` then `/settle`. Throws 402 `invalid_payment` on a negative verdict. */
export async function verifyAndSettleEvm(
  facilitator: Facilitator,
  decoded: Pick<DecodedPaymentHeader, 'version' | 'payload' | 'raw'>,
  requirement: PaymentRequirement,
  payment: EvmPayment,
  beforeSettle?: () => Promise<void>,
): Promise<EvmSettlement> {
  const { x402Version, paymentPayload, paymentRequirements } = facilitatorRequest(decoded, requirement, payment)
  const verdict = await facilitator.verify(paymentPayload, paymentRequirements, x402Version)
  if (verdict.isValid !== true) {
    throw new InvalidPaymentError(
      verdict.invalidReason ?? InvalidPaymentReasons.facilitatorRejected,
      `payment rejected by the facilitator${verdict.invalidReason ? `: ${verdict.invalidReason}` : ''}${verdict.invalidMessage ? ` (${verdict.invalidMessage})` : ''}`,
    )
  }
  await beforeSettle?.()
  const settled = await settleWithPendingRetry(facilitator, paymentPayload, paymentRequirements, x402Version)
  if (isSettlementPending(settled)) throw new SettlementPendingError(settled.transaction)
  if (settled.success !== true || typeof settled.transaction !== 'string' || settled.transaction === '') {
    throw new InvalidPaymentError(
      settled.errorReason ?? InvalidPaymentReasons.settlementFailed,
      `settlement failed${settled.errorReason ? `: ${settled.errorReason}` : ''}${settled.errorMessage ? ` (${settled.errorMessage})` : ''}`,
    )
  }
  return {
    payer: settled.payer ?? verdict.payer ?? payment.authorization.from,
    transaction: settled.transaction,
    // the CAIP-2 id, also for a v1 payment (the facilitator then reports the v1 name)
    network: requirement.network,
    response: settled,
  }
}
