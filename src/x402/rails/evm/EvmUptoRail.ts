import { PERMIT2_ADDRESS, x402UptoPermit2ProxyABI } from '@x402/evm'
import { createPublicClient, decodeFunctionData, http, parseAbi, parseEventLogs, type PublicClient } from 'viem'
import { InvalidPaymentError, PaymentHeaderInvalidError } from '../../errors.js'
import type { DecodedPaymentHeader, PaymentPayload } from '../../headers.js'
import { envSuffix } from '../../networks.js'
import type { RailOffer } from '../Rail.js'
import { InvalidPaymentReasons } from '../../reasons.js'
import { exactRequirement, type PaymentRequirement } from '../../requirements.js'
import { assertCoversWindow, type PaymentWindow } from '../../settlementWindow.js'

/** Where @x402/evm's `upto` client and facilitator expect x402's Permit2 proxy (the permit's spender). */
export const UPTO_PERMIT2_PROXY = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002'

export type EvmUptoRailOptions = {
  network: `eip155:${number}`
  label: string
  currency?: number
  /** ERC-20 token (approved to Permit2 by the payer) and its EIP-712 domain (stated in `extra`, as x402 does). */
  asset: string
  tokenName: string
  tokenVersion: string
  payTo: string
  /** The facilitator's settling address: a permit names it, and only it can settle (`SERVICE_X402__UPTO_FACILITATOR_ADDRESS`). */
  facilitatorAddress: string
  /** JSON-RPC of the chain (`SERVICE_X402__RPC_URL__<NETWORK>`), to reconcile a settlement from the chain; optional. */
  rpcUrl?: string
}

/** A settlement the gateway does not know the outcome of, as the chain tells it (`EvmUptoRail.recover`). */
export type UptoSettlementClaim = {
  payer: string
  payTo: string
  asset: string
  /** The amount the settlement transfers (what was served). */
  amount: bigint
  nonce: bigint
  deadline: bigint
  /** A transaction the facilitator broadcast for it (x402 `settlement_pending`), if one is known. */
  txHash?: string | null
}

/**
 * What the chain says of an `upto` settlement: `paid` (the transaction), `unused` (the permit can still be
 * settled: nothing moved), `never` (it can no longer be: expired unused, or the payer cancelled the nonce —
 * `payerFault`), or `wait` (not decided yet: a broadcast not mined, or a used nonce whose transfer is not found).
 */
export type UptoRecoveryVerdict =
  | { outcome: 'paid'; transaction: `0x${string}` }
  | { outcome: 'unused' }
  | { outcome: 'never'; why: string; payerFault: boolean }
  | { outcome: 'wait'; why: string }

const permit2Abi = parseAbi([
  'function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)',
  'event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask)',
])
const transferAbi = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 value)'])
/** How far back a settlement's transfer is looked for (blocks). */
const LOG_WINDOW = 50_000n

/** A decoded `upto` payload: a Permit2 witness transfer of at most `amount` of `token` to `to`, settled by `facilitator`. */
export type UptoPermit = {
  from: string
  spender: string
  token: string
  /** The most the payer allows (atomic units). */
  amount: bigint
  /** Permit2's unordered nonce (uint256, decimal). */
  nonce: bigint
  deadline: bigint
  to: string
  facilitator: string
  validAfter: bigint
  signature: string
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const UINT = /^\d{1,78}$/
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const same = (a: unknown, b: string) => typeof a === 'string' && a.toLowerCase() === b.toLowerCase()

/** Structural decode of an `upto` payload (`permit2Authorization` + `signature`). Missing or mistyped fields → 400. */
export function parseUptoPermit(payload: PaymentPayload): UptoPermit {
  const p = payload.payload
  if (typeof p.signature !== 'string') throw new PaymentHeaderInvalidError('missing field payload.signature (string)')
  const a = p.permit2Authorization
  if (!isObject(a) || !isObject(a.permitted) || !isObject(a.witness)) {
    throw new PaymentHeaderInvalidError('missing field payload.permit2Authorization {from, spender, permitted, nonce, deadline, witness}')
  }
  const address = (v: unknown, field: string): string => {
    if (typeof v !== 'string' || !ADDRESS.test(v)) throw new PaymentHeaderInvalidError(`payload.permit2Authorization.${field} must be a 0x address`)
    return v
  }
  const uint = (v: unknown, field: string): bigint => {
    const text = typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? String(v) : v
    if (typeof text !== 'string' || !UINT.test(text)) throw new PaymentHeaderInvalidError(`payload.permit2Authorization.${field} must be a non-negative integer string`)
    const n = BigInt(text)
    if (n >= 2n ** 256n) throw new PaymentHeaderInvalidError(`payload.permit2Authorization.${field} is not a uint256`)
    return n
  }
  return {
    from: address(a.from, 'from'),
    spender: address(a.spender, 'spender'),
    token: address(a.permitted.token, 'permitted.token'),
    amount: uint(a.permitted.amount, 'permitted.amount'),
    nonce: uint(a.nonce, 'nonce'),
    deadline: uint(a.deadline, 'deadline'),
    to: address(a.witness.to, 'witness.to'),
    facilitator: address(a.witness.facilitator, 'witness.facilitator'),
    validAfter: uint(a.witness.validAfter, 'witness.validAfter'),
    signature: p.signature,
  }
}

/**
 * x402's `upto` scheme on one EVM network: the payer signs a Permit2 witness transfer of at
 * most the requirement's `amount`; the facilitator later settles what the call actually cost, any amount up to
 * it, once (Permit2's nonce), through x402's `upto` proxy. Offered only by metered routes (cost calls, priced
 * by the tokens they produce), never by fixed-price ones (`/store`). Verification and settlement go through
 * the same facilitator pool as `exact`; the amount to settle is the caller's.
 */
export class EvmUptoRail {
  readonly scheme = 'upto' as const
  readonly settlement = 'authorize-then-settle' as const
  readonly id: `eip155:${number}`
  readonly label: string
  readonly options: EvmUptoRailOptions
  #client: PublicClient | undefined

  constructor(options: EvmUptoRailOptions) {
    this.options = options
    this.id = options.network
    this.label = options.label
  }

  async network(): Promise<string> {
    return this.id
  }

  missingSettings(): string[] {
    const missing: string[] = []
    if (!this.options.asset) missing.push(`SERVICE_X402__ASSET__${envSuffix(this.id)}`)
    if (!this.options.payTo) missing.push('SERVICE_X402__PAY_TO_EVM')
    if (!this.options.facilitatorAddress) missing.push('SERVICE_X402__UPTO_FACILITATOR_ADDRESS')
    return missing
  }

  async requirement(offer: RailOffer): Promise<PaymentRequirement> {
    return this.requirementOf(offer)
  }

  /** `amount` is the most one call may cost (`offer.priceAtomic`); `extra` carries what @x402/evm's client signs with. */
  requirementOf(offer: RailOffer): PaymentRequirement {
    const o = this.options
    return {
      ...exactRequirement(offer, {
        network: this.id,
        payTo: o.payTo,
        asset: o.asset,
        extra: { name: o.tokenName, version: o.tokenVersion, assetTransferMethod: 'permit2', facilitatorAddress: o.facilitatorAddress },
      }),
      scheme: 'upto',
    }
  }

  currencyCode(): number | undefined {
    return this.options.currency
  }

  /**
   * Decode and the local checks before anything is claimed or the facilitator asked: scheme, network, token,
   * recipient, spender (x402's proxy), the facilitator the permit names, a maximum of at least `minimumAtomic`
   * (a permit that could not pay the least a call costs buys no generation), the validity window — with
   * `callWindow`, a deadline far enough for the longest call plus its settlement (402
   * `payment_expires_too_soon`) — and the signature's shape. 400 (malformed) / 402 `invalid_payment` with a reason.
   */
  check(
    decoded: Pick<DecodedPaymentHeader, 'payload'>,
    requirement: PaymentRequirement,
    minimumAtomic: bigint,
    nowSeconds = Math.floor(Date.now() / 1000),
    callWindow?: PaymentWindow,
  ): UptoPermit {
    const permit = parseUptoPermit(decoded.payload)
    const accepted = decoded.payload.accepted
    const fail = (reason: string, message: string): never => {
      throw new InvalidPaymentError(reason, message)
    }
    if (accepted.scheme !== 'upto') fail(InvalidPaymentReasons.schemeMismatch, `scheme ${String(accepted.scheme)} is not accepted here; use upto`)
    if (accepted.network !== requirement.network) fail(InvalidPaymentReasons.networkMismatch, 'network differs from the requirement')
    if (!same(permit.token, requirement.asset)) fail(InvalidPaymentReasons.assetMismatch, `the permitted token must be ${requirement.asset} on ${requirement.network}`)
    if (accepted.payTo !== undefined && !same(accepted.payTo, requirement.payTo)) fail(InvalidPaymentReasons.payToMismatch, `payTo must be ${requirement.payTo}`)
    if (!same(permit.to, requirement.payTo)) fail(InvalidPaymentReasons.receiverMismatch, `witness.to must be ${requirement.payTo}`)
    if (!same(permit.spender, UPTO_PERMIT2_PROXY)) fail(InvalidPaymentReasons.spenderMismatch, `the permit's spender must be x402's upto proxy ${UPTO_PERMIT2_PROXY}`)
    if (!same(permit.facilitator, this.options.facilitatorAddress)) {
      fail(InvalidPaymentReasons.facilitatorMismatch, `witness.facilitator must be ${this.options.facilitatorAddress}`)
    }
    if (permit.amount < minimumAtomic) fail(InvalidPaymentReasons.amountInsufficient, `the permitted maximum ${permit.amount} is below the least a call costs, ${minimumAtomic}`)
    // The reference facilitator wants at least 6 s of validity left for the settlement transaction.
    if (permit.deadline <= BigInt(nowSeconds + 6)) fail(InvalidPaymentReasons.expired, 'permit2Authorization.deadline is not in the future')
    if (callWindow) assertCoversWindow(permit.deadline, callWindow, nowSeconds, 'permit2Authorization.deadline')
    if (permit.validAfter > BigInt(nowSeconds)) fail(InvalidPaymentReasons.notYetValid, 'witness.validAfter is in the future')
    if (!/^0x[0-9a-fA-F]+$/.test(permit.signature) || permit.signature.length < 132 || permit.signature.length % 2 !== 0) {
      fail(InvalidPaymentReasons.malformedSignature, 'payload.signature is not a 0x hex signature of at least 65 bytes')
    }
    return permit
  }

  /**
   * What the facilitator is sent (x402 v2 only: `upto` has no v1). To verify: the requirement with `amount` =
   * the permitted maximum (the reference facilitator checks they are equal and simulates a settlement of it).
   * To settle: `amount` = what the call cost, ≤ that maximum.
   */
  facilitatorRequest(decoded: Pick<DecodedPaymentHeader, 'payload'>, requirement: PaymentRequirement, amount: bigint) {
    const value = amount.toString()
    return { x402Version: 2 as const, paymentPayload: decoded.payload, paymentRequirements: { ...requirement, amount: value, maxAmountRequired: value } }
  }

  /** True when settlements can be reconciled from this chain (`SERVICE_X402__RPC_URL__<NETWORK>`). */
  get canRecover(): boolean {
    return Boolean(this.options.rpcUrl)
  }

  /**
   * Reads the chain about an `upto` settlement whose outcome the gateway does not know. A broadcast transaction
   * that succeeded with the payer's transfer to `payTo` of at least `amount` is `paid`. Otherwise Permit2's
   * nonce decides: unused — `unused` before the deadline, `never` after it; used — `paid` when a transaction of
   * x402's proxy settling this very nonce is found (a used nonce alone proves nothing: the payer can invalidate
   * it), `never` (the payer's fault) when the payer invalidated it, else `wait` for an operator.
   */
  async recover(claim: UptoSettlementClaim, nowSeconds = Math.floor(Date.now() / 1000)): Promise<UptoRecoveryVerdict> {
    if (!this.options.rpcUrl) return { outcome: 'wait', why: `no SERVICE_X402__RPC_URL__${envSuffix(this.id)}` }
    this.#client ??= createPublicClient({ transport: http(this.options.rpcUrl, { timeout: 10_000, retryCount: 1 }) }) as PublicClient
    const client = this.#client
    const payer = claim.payer as `0x${string}`
    const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
    const paysUs = (logs: Parameters<typeof parseEventLogs>[0]['logs']) =>
      parseEventLogs({ abi: transferAbi, eventName: 'Transfer', logs }).some(
        (t) => same(t.address, claim.asset) && same(t.args.from, claim.payer) && same(t.args.to, claim.payTo) && t.args.value >= claim.amount,
      )
    let broadcastUnmined = false
    if (claim.txHash) {
      const receipt = await client.getTransactionReceipt({ hash: claim.txHash as `0x${string}` }).catch(() => undefined)
      if (receipt?.status === 'success' && paysUs(receipt.logs)) return { outcome: 'paid', transaction: receipt.transactionHash }
      broadcastUnmined = receipt === undefined
    }
    const word = await client.readContract({ address: PERMIT2_ADDRESS, abi: permit2Abi, functionName: 'nonceBitmap', args: [payer, claim.nonce >> 8n] })
    const used = ((word >> (claim.nonce & 255n)) & 1n) === 1n
    if (!used) {
      if (BigInt(nowSeconds) > claim.deadline) return { outcome: 'never', why: 'the permit expired unused', payerFault: false }
      // a broadcast still in the mempool may yet use it: settling again would only revert, so wait for it
      if (broadcastUnmined) return { outcome: 'wait', why: `transaction ${claim.txHash} is not mined yet` }
      return { outcome: 'unused' }
    }
    const latest = await client.getBlockNumber({ cacheTime: 0 }) // not a number viem kept from an earlier read: the transaction sought may be newer
    const window = { fromBlock: latest > LOG_WINDOW ? latest - LOG_WINDOW : 0n, toBlock: latest }
    const transfers = await client.getLogs({ address: claim.asset as `0x${string}`, event: transferAbi[0], args: { from: payer, to: claim.payTo as `0x${string}` }, ...window })
    for (const hash of new Set(transfers.map((t) => t.transactionHash))) {
      const tx = await client.getTransaction({ hash })
      if (!tx.to || !same(tx.to, UPTO_PERMIT2_PROXY)) continue
      const call = (() => {
        try {
          return decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: tx.input })
        } catch {
          return undefined
        }
      })()
      const permit = call?.functionName === 'settle' ? (call.args[0] as { nonce: bigint }) : undefined
      if (permit?.nonce !== claim.nonce) continue
      const receipt = await client.getTransactionReceipt({ hash })
      if (receipt.status === 'success' && paysUs(receipt.logs)) return { outcome: 'paid', transaction: hash }
    }
    const cancelled = await client.getLogs({ address: PERMIT2_ADDRESS, event: permit2Abi[1], args: { owner: payer }, ...window })
    if (cancelled.some((c) => c.args.word === claim.nonce >> 8n && (((c.args.mask ?? 0n) >> (claim.nonce & 255n)) & 1n) === 1n)) {
      return { outcome: 'never', why: 'the payer invalidated the permit nonce', payerFault: true }
    }
    return { outcome: 'wait', why: 'the permit nonce is used on chain but no settlement of it was found: an operator decides' }
  }
}
