import type { PaymentRequirements } from '@x402/core/types'
import type { ChannelConfig } from '@x402/evm'
import { PaymentHeaderInvalidError, InvalidPaymentError } from '../errors.js'
import type { DecodedPaymentHeader } from '../headers.js'
import type { RailOffer } from '../PaymentRail.js'
import { InvalidPaymentReasons } from '../reasons.js'
import { exactRequirement, type PaymentRequirement } from '../requirements.js'

export const BATCH_SCHEME = 'batch-settlement'

export { BATCH_CUMULATIVE_MISMATCH as CUMULATIVE_MISMATCH } from '../errors.js'

/** One chain the scheme is offered on: its token (EIP-3009, the escrow's deposits pull it) and EIP-712 domain. */
export type BatchNetwork = { network: `eip155:${number}`; asset: `0x${string}`; tokenName: string; tokenVersion: string }

/** The channel terms every payer's channel must carry on one chain (what the requirement's `extra` announces). */
export type BatchTerms = { payTo: `0x${string}`; receiverAuthorizer: `0x${string}`; withdrawDelayS: number; minDepositCalls: number }

/**
 * The `batch-settlement` requirement of an offer on one chain: `amount` is the most one call may cost (the
 * voucher's step), `extra` what @x402/evm's client builds the channel from — the token's EIP-712 domain, the
 * deposit method (`eip3009`), and the fields the scheme's server adds (`receiverAuthorizer`, `withdrawDelay`,
 * `minDeposit`: `amount` × the calls a deposit should cover).
 */
export function batchRequirement(offer: RailOffer, on: BatchNetwork, terms: BatchTerms): PaymentRequirement {
  return {
    ...exactRequirement(offer, {
      network: on.network,
      payTo: terms.payTo,
      asset: on.asset,
      extra: {
        name: on.tokenName,
        version: on.tokenVersion,
        assetTransferMethod: 'eip3009',
        receiverAuthorizer: terms.receiverAuthorizer,
        withdrawDelay: terms.withdrawDelayS,
        minDeposit: (offer.priceAtomic * BigInt(terms.minDepositCalls)).toString(),
      },
    }),
    scheme: BATCH_SCHEME,
  }
}

/** The requirement as @x402/core types it (the v2 fields only). */
export function coreRequirement(r: PaymentRequirement): PaymentRequirements {
  return { scheme: r.scheme, network: r.network as `${string}:${string}`, amount: r.amount, asset: r.asset, payTo: r.payTo, maxTimeoutSeconds: r.maxTimeoutSeconds, extra: { ...(r.extra ?? {}) } }
}

export type BatchPayloadKind = 'deposit' | 'voucher' | 'refund'

/** What the gateway reads of a batch-settlement payload before the scheme and the facilitator see it. */
export type BatchPayment = { kind: BatchPayloadKind; payer: string; channelId: string; maxClaimable: bigint; config: ChannelConfig }

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const BYTES32 = /^0x[0-9a-fA-F]{64}$/
const UINT = /^\d{1,39}$/
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase()

/**
 * Decode and the local checks of a `batch-settlement` payload: its shape (400), then its channel's terms
 * against this requirement (402 with a reason): the scheme and network, the token, the receiver, the receiver
 * authorizer (only the gateway's own key may claim or refund its channels) and the withdraw delay. The voucher's
 * signature, the channel's balance and the running total are the scheme's and the facilitator's checks.
 */
export function checkBatchPayment(decoded: Pick<DecodedPaymentHeader, 'payload'>, requirement: PaymentRequirement): BatchPayment {
  const p = decoded.payload.payload
  const kind = p.type
  if (kind !== 'deposit' && kind !== 'voucher' && kind !== 'refund') throw new PaymentHeaderInvalidError('payload.type must be deposit, voucher or refund')
  const config = p.channelConfig
  const voucher = p.voucher
  if (!isObject(config)) throw new PaymentHeaderInvalidError('missing field payload.channelConfig (object)')
  if (!isObject(voucher)) throw new PaymentHeaderInvalidError('missing field payload.voucher {channelId, maxClaimableAmount, signature}')
  for (const field of ['payer', 'payerAuthorizer', 'receiver', 'receiverAuthorizer', 'token'] as const) {
    if (typeof config[field] !== 'string' || !ADDRESS.test(config[field] as string)) throw new PaymentHeaderInvalidError(`payload.channelConfig.${field} must be a 0x address`)
  }
  if (typeof config.withdrawDelay !== 'number' || !Number.isSafeInteger(config.withdrawDelay)) throw new PaymentHeaderInvalidError('payload.channelConfig.withdrawDelay must be an integer')
  if (typeof config.salt !== 'string' || !BYTES32.test(config.salt)) throw new PaymentHeaderInvalidError('payload.channelConfig.salt must be 32 bytes of hex')
  if (typeof voucher.channelId !== 'string' || !BYTES32.test(voucher.channelId)) throw new PaymentHeaderInvalidError('payload.voucher.channelId must be 32 bytes of hex')
  if (typeof voucher.maxClaimableAmount !== 'string' || !UINT.test(voucher.maxClaimableAmount)) {
    throw new PaymentHeaderInvalidError('payload.voucher.maxClaimableAmount must be a non-negative integer string')
  }
  if (typeof voucher.signature !== 'string' || !/^0x[0-9a-fA-F]{130,}$/.test(voucher.signature)) throw new PaymentHeaderInvalidError('payload.voucher.signature must be a 0x hex signature')
  if (kind === 'deposit') {
    const deposit = p.deposit
    if (!isObject(deposit) || typeof deposit.amount !== 'string' || !UINT.test(deposit.amount) || !isObject(deposit.authorization)) {
      throw new PaymentHeaderInvalidError('payload.deposit must be {amount, authorization}')
    }
  }
  if (kind === 'refund' && p.amount !== undefined && (typeof p.amount !== 'string' || !UINT.test(p.amount))) throw new PaymentHeaderInvalidError('payload.amount must be a positive integer string')

  const fail = (reason: string, message: string): never => {
    throw new InvalidPaymentError(reason, message)
  }
  const accepted = decoded.payload.accepted
  const extra = requirement.extra ?? {}
  if (accepted.scheme !== BATCH_SCHEME) fail(InvalidPaymentReasons.schemeMismatch, `scheme ${String(accepted.scheme)} is not ${BATCH_SCHEME}`)
  if (accepted.network !== requirement.network) fail(InvalidPaymentReasons.networkMismatch, 'network differs from the requirement')
  if (!same(config.token, requirement.asset)) fail(InvalidPaymentReasons.assetMismatch, `the channel's token must be ${requirement.asset} on ${requirement.network}`)
  if (!same(config.receiver, requirement.payTo)) fail(InvalidPaymentReasons.receiverMismatch, `the channel's receiver must be ${requirement.payTo}`)
  if (!same(config.receiverAuthorizer, String(extra.receiverAuthorizer))) {
    fail(InvalidPaymentReasons.authorizerMismatch, `the channel's receiverAuthorizer must be ${String(extra.receiverAuthorizer)}`)
  }
  if (config.withdrawDelay !== extra.withdrawDelay) fail(InvalidPaymentReasons.withdrawDelayMismatch, `the channel's withdrawDelay must be ${String(extra.withdrawDelay)}`)
  return {
    kind,
    payer: (config.payer as string).toLowerCase(),
    channelId: (voucher.channelId as string).toLowerCase(),
    maxClaimable: BigInt(voucher.maxClaimableAmount),
    config: config as unknown as ChannelConfig,
  }
}
