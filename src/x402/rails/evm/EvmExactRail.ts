import { createPublicClient, http, parseAbi, parseEventLogs, type PublicClient } from 'viem'
import type { Facilitator } from '../../FacilitatorPool.js'
import type { DecodedPaymentHeader } from '../../headers.js'
import { type EvmAuthorization, type EvmPayment, type EvmSettlement, facilitatorRequest, parseEvmPayment, precheckEvmPayment, verifyAndSettleEvm } from './evmRail.js'
import { envSuffix } from '../../networks.js'
import { FacilitatorUnavailableError, PaymentReplayedError, SettlementPendingError } from '../../errors.js'
import { settleWithPendingRetry } from '../../settleWithPendingRetry.js'
import { claimedAuthorization } from './claimedAuthorization.js'
import type { ClaimVerdict, DepositBook, HeldPayment, HeldSettlement, PrecheckContext, Rail, RailBelief, RailOffer, RailSettled, RailSettleInput, SettleDeps } from '../Rail.js'
import { EvmPayerCheck } from './EvmPayerCheck.js'
import { exactRequirement, type PaymentRequirement } from '../../requirements.js'
import { assertCoversWindow, type PaymentWindow } from '../../settlementWindow.js'

export type EvmExactRailOptions = {
  network: `eip155:${number}`
  label: string
  /** Receipt currency code (docs/design.md); undefined: payments on it get no batch receipt. */
  currency?: number
  /** EIP-3009 token contract and its EIP-712 domain. */
  asset: string
  tokenName: string
  tokenVersion: string
  payTo: string
  /** JSON-RPC of the chain, to recover a payment an instance died settling; optional. */
  rpcUrl?: string
}

/** What the chain says of a claimed authorization an instance died settling (see `recover`). */
export type RecoveryVerdict =
  | { outcome: 'paid'; transaction: `0x${string}` }
  | { outcome: 'never'; why: string }
  | { outcome: 'wait'; why: string }

const abi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
])
/** How far back the settlement's log is looked for (blocks). */
const LOG_WINDOW = 50_000n

/** The `exact` scheme (EIP-3009 `transferWithAuthorization`) on one EVM network, settled by the facilitator. */
export class EvmExactRail implements Rail {
  readonly scheme = 'exact' as const
  readonly settlement = 'authorize-then-settle' as const
  readonly id: `eip155:${number}`
  readonly label: string
  readonly options: EvmExactRailOptions
  #client: PublicClient | undefined
  #payerCheck: EvmPayerCheck | undefined

  constructor(options: EvmExactRailOptions) {
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
    return missing
  }

  async requirement(offer: RailOffer): Promise<PaymentRequirement> {
    return this.requirementOf(offer)
  }

  /** The same, synchronously (an EVM rail knows its network without asking anyone). */
  requirementOf(offer: RailOffer): PaymentRequirement {
    const o = this.options
    return exactRequirement(offer, { network: this.id, payTo: o.payTo, asset: o.asset, extra: { name: o.tokenName, version: o.tokenVersion } })
  }

  currencyCode(): number | undefined {
    return this.options.currency
  }

  /**
   * Decode and the local checks (network, asset, payTo, amount, validity, signature shape): 400 / 402. With
   * `callWindow` (a payment settled after its call ran), `validBefore` must also leave the longest call plus its
   * settlement: 402 `payment_expires_too_soon`.
   */
  check(decoded: Pick<DecodedPaymentHeader, 'payload'>, requirement: PaymentRequirement, nowSeconds = Math.floor(Date.now() / 1000), callWindow?: PaymentWindow): EvmPayment {
    const payment = parseEvmPayment(decoded.payload)
    precheckEvmPayment(decoded.payload, payment, requirement, nowSeconds)
    if (callWindow) assertCoversWindow(payment.authorization.validBefore, callWindow, nowSeconds, 'authorization.validBefore')
    return payment
  }

  /** What the facilitator is sent for this requirement: the same object the pre-check passed. */
  facilitatorRequest(decoded: Pick<DecodedPaymentHeader, 'version' | 'payload' | 'raw'>, requirement: PaymentRequirement, payment: EvmPayment) {
    return facilitatorRequest(decoded, requirement, payment)
  }

  verifyAndSettle(
    facilitator: Facilitator,
    decoded: Pick<DecodedPaymentHeader, 'version' | 'payload' | 'raw'>,
    requirement: PaymentRequirement,
    payment: EvmPayment,
    beforeSettle?: () => Promise<void>,
  ): Promise<EvmSettlement> {
    return verifyAndSettleEvm(facilitator, decoded, requirement, payment, beforeSettle)
  }

  normalisePayer(payer: string): string {
    return payer.toLowerCase()
  }

  /**
   * Before an upload slot: the local checks at the least any upload costs, the payment not used here already,
   * then the signer recovered locally and the payer's nonce and funds read on chain (`EvmPayerCheck`).
   */
  async precheck(decoded: DecodedPaymentHeader, requirement: PaymentRequirement, ctx: PrecheckContext): Promise<RailBelief> {
    const payment = this.check(decoded, requirement)
    await ctx.assertUnclaimed(payment.authorization.from, payment.authorization.nonce)
    this.#payerCheck ??= new EvmPayerCheck({ cacheMs: ctx.cacheMs })
    return this.#payerCheck.believe(this, payment)
  }

  /** An authorization below the size's price is refused before anything is spooled. */
  checkAmount(decoded: DecodedPaymentHeader, requirement: PaymentRequirement): void {
    this.check(decoded, requirement)
  }

  /**
   * The authorization is claimed before the facilitator hears of it (concurrent replays, on any paid route,
   * find it taken), then verified and settled. A settlement whose outcome is unknown keeps the claim.
   */
  async settle({ decoded, requirement }: RailSettleInput, book: DepositBook, { facilitator, logger }: SettleDeps): Promise<RailSettled> {
    const payment = this.check(decoded, requirement)
    const from = payment.authorization.from
    const depositId = await book.claim({ payer: from, nonce: payment.authorization.nonce, asset: requirement.asset, amountAtomic: payment.authorization.value, payerTag: from })
    if (depositId === undefined) throw new PaymentReplayedError()
    let settling = false
    try {
      const settled = await this.verifyAndSettle(facilitator, decoded, requirement, payment, async () => {
        settling = true
      })
      const settlement = { ...settled.response, success: true, transaction: settled.transaction, network: settled.network, payer: settled.payer }
      const fresh = await book.markSettled(depositId, settled.transaction, settled.response)
      if (!fresh) logger?.warn({ deposit_id: depositId, tx_hash: settled.transaction }, 'settlement tx hash already recorded')
      await book.activate()
      return { depositId, payerTag: from, settlement }
    } catch (error) {
      if (settling && (error instanceof FacilitatorUnavailableError || error instanceof SettlementPendingError)) {
        // The settlement may or may not have happened (unreachable facilitator, or x402's `settlement_pending`
        // after its one retry): keep the claim (the payload can never be reused) and the spooled bytes, for
        // reconciliation from the chain.
        await book.markSettleUnknown(depositId, String(error))
      } else {
        await book.dropUnpaid(depositId)
      }
      throw error
    }
  }

  /** A claimed upload payment: its authorization read from the stored payload, then `recover`. */
  async recoverClaim(claim: { paymentPayloadJson: string; asset: string; payTo: string; amount: bigint }): Promise<ClaimVerdict | undefined> {
    const authorization = claimedAuthorization(claim.paymentPayloadJson)
    if (!authorization) return undefined
    const verdict = await this.recover({ asset: claim.asset, payTo: claim.payTo, amount: claim.amount, authorization })
    return verdict.outcome === 'paid' ? { ...verdict, payer: authorization.from } : verdict
  }

  /** A cost call's payment: the local checks, its `validBefore` leaving the call plus its settlement. */
  authorize(decoded: DecodedPaymentHeader, requirement: PaymentRequirement, nowSeconds: number, callWindow?: PaymentWindow): HeldPayment {
    const { authorization } = this.check(decoded, requirement, nowSeconds, callWindow)
    return { payer: authorization.from, nonce: authorization.nonce, amount: authorization.value, validBefore: authorization.validBefore }
  }

  verifyHeld(facilitator: Facilitator, decoded: DecodedPaymentHeader, requirement: PaymentRequirement): Promise<{ isValid: boolean; invalidReason?: string; invalidMessage?: string }> {
    const request = this.facilitatorRequest(decoded, requirement, parseEvmPayment(decoded.payload))
    return facilitator.verify(request.paymentPayload, request.paymentRequirements, request.x402Version)
  }

  settleHeld(facilitator: Facilitator, decoded: DecodedPaymentHeader, requirement: PaymentRequirement): Promise<HeldSettlement> {
    // one requirement object from the pre-check to the facilitator
    const request = this.facilitatorRequest(decoded, requirement, parseEvmPayment(decoded.payload))
    return settleWithPendingRetry(facilitator, request.paymentPayload, request.paymentRequirements, request.x402Version)
  }

  /** True when recovery can read this chain (`SERVICE_X402__RPC_URL__<NETWORK>`). */
  get canRecover(): boolean {
    return Boolean(this.options.rpcUrl)
  }

  /**
   * Reads the chain about a claimed authorization whose settlement nobody recorded. Paid only when the
   * authorization is used AND the transaction that used it (its `AuthorizationUsed` log) carries a `Transfer`
   * of the token from the payer to `payTo` of at least `amount`: `authorizationState == true` alone proves
   * nothing — `cancelAuthorization`, or another authorization signed with the same nonce, sets it too.
   * Never: cancelled, spent on another transfer, or unused and expired. Otherwise wait.
   */
  async recover(claim: { asset: string; payTo: string; amount: bigint; authorization: EvmAuthorization }, nowSeconds = Math.floor(Date.now() / 1000)): Promise<RecoveryVerdict> {
    if (!this.options.rpcUrl) return { outcome: 'wait', why: `no SERVICE_X402__RPC_URL__${envSuffix(this.id)}` }
    this.#client ??= createPublicClient({ transport: http(this.options.rpcUrl, { timeout: 10_000, retryCount: 1 }) }) as PublicClient
    const client = this.#client
    const token = claim.asset as `0x${string}`
    const auth = claim.authorization
    const args = [auth.from as `0x${string}`, auth.nonce as `0x${string}`] as const
    const used = await client.readContract({ address: token, abi, functionName: 'authorizationState', args })
    if (!used) {
      if (auth.validBefore < BigInt(nowSeconds - 6)) return { outcome: 'never', why: 'it never settled and can no longer settle' }
      return { outcome: 'wait', why: 'not settled yet' }
    }
    const latest = await client.getBlockNumber({ cacheTime: 0 }) // not a number viem kept from an earlier read: the transaction sought may be newer
    const window = { fromBlock: latest > LOG_WINDOW ? latest - LOG_WINDOW : 0n, toBlock: latest }
    const usedLogs = await client.getLogs({ address: token, event: abi[1], args: { authorizer: args[0], nonce: args[1] }, ...window })
    const transaction = usedLogs[0]?.transactionHash
    if (!transaction) {
      const cancelled = await client.getLogs({ address: token, event: abi[3], args: { authorizer: args[0], nonce: args[1] }, ...window })
      if (cancelled.length > 0) return { outcome: 'never', why: 'the payer cancelled the authorization' }
      return { outcome: 'wait', why: 'used on chain outside the log window: an operator decides' }
    }
    const receipt = await client.getTransactionReceipt({ hash: transaction })
    const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()
    const paid =
      receipt.status === 'success' &&
      parseEventLogs({ abi, eventName: 'Transfer', logs: receipt.logs }).some(
        (t) => same(t.address, token) && same(t.args.from, auth.from) && same(t.args.to, claim.payTo) && t.args.value >= claim.amount,
      )
    if (!paid) return { outcome: 'never', why: `its nonce was spent in ${transaction} without paying ${claim.amount} to ${claim.payTo}` }
    return { outcome: 'paid', transaction }
  }
}
