import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { EventSink } from '../catalogue/EventSink.js'
import type { Database } from '../db/Database.js'
import type { Logger } from '../shared/logger.js'
import { ulid } from '../storage/ids.js'
import { BatchCumulativeMismatchError, type BatchCorrection, type BatchSettlement, BatchSettlementNotOfferedError } from '../x402/batch/BatchSettlement.js'
import { BATCH_SCHEME, checkBatchPayment } from '../x402/batch/batchRequirement.js'
import type { X402Config } from '../x402/config.js'
import {
  createAlgodClient,
  createRailRegistry,
  decodePaymentHeader,
  encodeBase64Json,
  FacilitatorClient,
  type Facilitator,
  FacilitatorPool,
  FacilitatorUnavailableError,
  HEADER_PAYMENT_RESPONSE,
  InvalidPaymentError,
  InvalidPaymentReasons,
  PaymentRequiredError,
  type PaymentRequired,
  type PaymentRequirement,
  paymentIdentifierExtensions,
  paymentIdentifierOf,
  PaymentIdentifiers,
  PaymentReplayedError,
  type RailRegistry,
  UnsupportedNetworkError,
  type DecodedPaymentHeader,
  BATCH_CUMULATIVE_MISMATCH,
  isSettlementPending,
  settleWithPendingRetry,
  SettlementPendingError,
  assertCoversWindow,
  paymentWindow,
  type PaymentWindow,
  settleDeadlineMs,
} from '../x402/index.js'
import { CallTakenOverError } from './CallTakenOverError.js'
import { CostPaymentLedger, type UptoCheckpoint } from './CostPaymentLedger.js'
import { DEFAULT_MAX_CALL_S } from './paymentWindow.js'
import { type BatchCheckpoint, InterruptedCalls } from './InterruptedCalls.js'
import { attemptSettle, isPayerFault, SettlementReconciler } from './SettlementReconciler.js'
import { type DebtRow, SettlementDebts } from './SettlementDebts.js'
import { maxTokensFor, meteredAmount, type TokenPricing } from './tokenPricing.js'
import { UsageLedger } from './UsageLedger.js'

type HeaderBag = Record<string, string | string[] | undefined>

/** The 402 of a cost call past the quota: the x402 v2 body (two EVM rails) plus the quota in `details`. */
export type CostPaymentRequired = PaymentRequired & { details?: Record<string, unknown> }

/**
 * A v2 `SettleResponse` (what `PAYMENT-RESPONSE` carries on a paid cost call). `amount`: what was settled
 * (atomic units; `upto`: the tokens produced × the price; `transaction` is '' when nothing was due).
 */
export type CostSettlement = {
  success: true
  transaction: string
  network: string
  payer: string
  payment_id: string
  amount: string
  scheme: 'exact' | 'upto' | 'batch-settlement'
  /** `batch-settlement`: the scheme's `chargedAmount` and `channelState` (what the payer's client checks and continues from). */
  extra?: Record<string, unknown>
}

export type CostPaymentsOptions = {
  db: Kysely<Database>
  x402: X402Config
  /** Price of one cost call past the quota, atomic units of the 6-decimal USDC (0 = `exact` is off). */
  priceAtomic: bigint
  /** x402 `upto`: price per produced token, least and most per call (default: off). */
  tokenPricing?: TokenPricing
  publicOrigin: string
  events?: EventSink
  logger?: Logger
  /** The payment rails registered at start; default: those of `x402`. Cost calls use the deferrable ones. */
  rails?: RailRegistry
  /** Replaces the facilitator pool built from `x402` (tests). */
  facilitator?: Facilitator
  /** x402 `batch-settlement` (deposit once, a voucher per call, claims in batches); absent: not offered. */
  batch?: BatchSettlement
  /** x402 `sign-in-with-x`: its declaration (a fresh challenge) goes into every 402. */
  signIn?: { declaration(resourceUrl: string): Record<string, unknown> }
  /** Epoch seconds. */
  now?: () => number
  /**
   * The longest a paid call may run (s, `SERVICE_QUOTA__MAX_CALL_S`): a payment is accepted only when it stays
   * valid that long plus the settlement margin (`src/x402/settlementWindow.ts`).
   */
  maxCallS?: number
  /** This replica's name (`gateway_instances`): whose lease a settlement debt is under while reconciled. */
  instanceId?: string
}

/** The call being paid for. */
export type CostCallInfo = { wallet: string; route: string; method: string; path: string }

/**
 * Paying for cost calls past the daily quota with x402, framework-free.
 *
 * Same rails and rules as `/store` where they apply: the registry's EVM `exact` rails (EIP-3009) through the
 * facilitator pool, with the same local prechecks. The Algorand rail is not offered
 * here: an Algorand payment is final once submitted, so a call that then fails could not go unsettled.
 *
 * Order of a paid call: decode → precheck → claim (network, payer, nonce) in `payment_claims` (shared with
 * `/store`: a payload an upload holds or used is refused) and (payer, nonce) in `cost_payments` → facilitator
 * `/verify` → the call runs → `/settle` once it produced output → `PAYMENT-RESPONSE`. The claim is
 * unique-keyed inserts, so one payload runs one call, whatever the number of concurrent retries or gateway
 * instances; a call that fails before any output releases its claim unsettled (the payer may retry).
 */
export class CostPayments {
  readonly priceAtomic: bigint
  readonly tokenPricing: TokenPricing
  readonly #x402: X402Config
  readonly #rails: RailRegistry
  readonly #identifiers: PaymentIdentifiers
  readonly #origin: string
  readonly #ledger: CostPaymentLedger
  readonly #facilitator: Facilitator
  readonly #events: EventSink | undefined
  readonly #logger: Logger | undefined
  readonly #now: () => number
  readonly #batch: BatchSettlement | undefined
  readonly #signIn: CostPaymentsOptions['signIn']
  /** Corrections of refused batch vouchers, by the refusal's message, until the 402 built from it takes them. */
  readonly #corrections = new Map<string, { network: string; correction: BatchCorrection; at: number }>()
  readonly #window: PaymentWindow
  readonly #debts: SettlementDebts
  readonly #reconciler: SettlementReconciler
  readonly #interrupted: InterruptedCalls
  /** This replica's name: the owner of the `upto` calls it serves and of the debts it reconciles. */
  readonly #owner: string
  #reconciling: NodeJS.Timeout | undefined

  constructor(o: CostPaymentsOptions) {
    this.priceAtomic = o.priceAtomic
    this.tokenPricing = o.tokenPricing ?? { perTokenMicro: 0n, minAtomic: 0n, maxAtomic: 0n }
    this.#x402 = o.x402
    this.#rails = o.rails ?? createRailRegistry(o.x402, createAlgodClient(o.x402.algodUrl, o.x402.algodToken))
    this.#origin = o.publicOrigin.replace(/\/+$/, '')
    this.#now = o.now ?? (() => Math.floor(Date.now() / 1000))
    this.#ledger = new CostPaymentLedger(o.db, this.#now)
    this.#identifiers = new PaymentIdentifiers(o.db)
    this.#events = o.events
    this.#logger = o.logger
    this.#batch = o.batch
    this.#signIn = o.signIn
    this.#facilitator =
      o.facilitator ??
      new FacilitatorPool({
        clients: [o.x402.facilitatorUrl, ...o.x402.fallbackFacilitatorUrls].map((url) => new FacilitatorClient({ url, token: o.x402.facilitatorToken })),
        onFailover: (info) => o.logger?.warn({ step: info.step, from: info.from, to: info.to }, 'facilitator unreachable: trying the next'),
      })
    this.#window = paymentWindow(o.maxCallS ?? DEFAULT_MAX_CALL_S)
    this.#debts = new SettlementDebts(o.db, this.#now)
    this.#owner = o.instanceId ?? `process-${randomUUID()}`
    this.#interrupted = new InterruptedCalls({
      ledger: this.#ledger,
      debts: this.#debts,
      usage: new UsageLedger(o.db, this.#now),
      batch: o.batch,
      owner: this.#owner,
      now: this.#now,
      logger: o.logger,
    })
    this.#reconciler = new SettlementReconciler({
      debts: this.#debts,
      payments: this.#ledger,
      rails: this.#rails,
      facilitator: this.#facilitator,
      owner: this.#owner,
      now: this.#now,
      events: o.events,
      logger: o.logger,
    })
  }

  /** What a payment must cover here: the longest call plus the settlement margin (and what the 402 offers). */
  get window(): PaymentWindow {
    return this.#window
  }

  /** Settlements that failed after their call was served (`settlement_debts`). */
  get debts(): SettlementDebts {
    return this.#debts
  }

  /** Settles or closes those debts, on the chain's word (see `SettlementReconciler`). */
  get reconciler(): SettlementReconciler {
    return this.#reconciler
  }

  /** `upto` and `batch-settlement` calls whose instance stopped mid-stream (see `InterruptedCalls`). */
  get interrupted(): InterruptedCalls {
    return this.#interrupted
  }

  /**
   * Every `intervalMs`: first the paid calls whose instance died mid-stream are billed what they served,
   * then the due debts are reconciled (replicas share both by conditional updates); `stopReconciling` ends it.
   */
  startReconciling(intervalMs = 5_000): void {
    if (this.#reconciling) return
    let running = false
    this.#reconciling = setInterval(() => {
      if (running) return
      running = true
      this.#interrupted
        .sweep()
        .catch((error: unknown) => this.#logger?.error({ err: error }, 'interrupted upto calls: sweep failed'))
        .then(() => this.#reconciler.reconcileDue())
        .catch((error: unknown) => this.#logger?.error({ err: error }, 'settlement debts: reconciliation round failed'))
        .finally(() => (running = false))
    }, intervalMs)
    this.#reconciling.unref()
  }

  stopReconciling(): void {
    clearInterval(this.#reconciling)
    this.#reconciling = undefined
  }

  /** Paying past the quota is offered: a price (per call or per token) is set and the EVM payment settings are there. */
  get enabled(): boolean {
    return (this.priceAtomic > 0n || this.uptoEnabled) && this.#x402.payToEvm !== '' && this.#x402.facilitatorToken !== ''
  }

  /** `upto` is offered: a price per token and at least one ready `upto` rail (its facilitator address is set). */
  get uptoEnabled(): boolean {
    return this.tokenPricing.perTokenMicro > 0n && this.#rails.metered.length > 0
  }

  /** The `upto` terms as `GET /llm/usage` states them. */
  uptoTerms(): { price_per_token_atomic: string; min_per_call_atomic: string; max_per_call_atomic: string } {
    const p = this.tokenPricing
    const fraction = (p.perTokenMicro % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '')
    return {
      price_per_token_atomic: `${p.perTokenMicro / 1_000_000n}${fraction ? `.${fraction}` : ''}`,
      min_per_call_atomic: p.minAtomic.toString(),
      max_per_call_atomic: p.maxAtomic.toString(),
    }
  }

  get ledger(): CostPaymentLedger {
    return this.#ledger
  }

  /**
   * The requirements of one call of `path` (v2 terms), on the rails whose payments can be held until the call
   * produced output (`authorize-then-settle`: the EVM rails, in the `/store` order). The Algorand rail is not
   * offered: its payment is final once submitted.
   */
  requirements(info: Pick<CostCallInfo, 'method' | 'path'>): PaymentRequirement[] {
    return this.#railRequirements(info).map((r) => r.requirement)
  }

  #offer(info: Pick<CostCallInfo, 'method' | 'path'>, priceAtomic: bigint) {
    // stock clients sign a validity of `maxTimeoutSeconds`: enough for the longest call and its settlement
    const maxTimeoutSeconds = Math.max(this.#x402.maxTimeoutSeconds, this.#window.offeredTimeoutS)
    return { resourceUrl: `${this.#origin}${info.path}`, description: describeCall(info), mimeType: 'application/json', priceAtomic, maxTimeoutSeconds }
  }

  /**
   * `exact` (a fixed price per call), then `upto` (at most the maximum per call; the call settles its tokens ×
   * price), then `batch-settlement` (a voucher of at most that per call, from one deposit).
   */
  #railRequirements(info: Pick<CostCallInfo, 'method' | 'path'>) {
    const exact = this.priceAtomic > 0n ? this.#exactRequirements(info) : []
    const upto = this.uptoEnabled ? this.#rails.metered.map((rail) => ({ rail, requirement: rail.requirementOf(this.#offer(info, this.tokenPricing.maxAtomic)) })) : []
    const batch = this.#batchEnabled ? (this.#batch as BatchSettlement).requirements(this.#offer(info, this.#batchPrice)).map((requirement) => ({ rail: undefined, requirement })) : []
    return [...exact, ...upto, ...batch]
  }

  /** A batch voucher's step: the most a call costs (metered by its tokens when a price per token is set, else the price per call). */
  get #batchPrice(): bigint {
    return this.tokenPricing.perTokenMicro > 0n ? this.tokenPricing.maxAtomic : this.priceAtomic
  }

  get #batchEnabled(): boolean {
    return this.#batch !== undefined && this.#batchPrice > 0n
  }

  #exactRequirements(info: Pick<CostCallInfo, 'method' | 'path'>) {
    const offer = this.#offer(info, this.priceAtomic)
    return this.#rails.deferrable.map((rail) => ({ rail, requirement: rail.requirementOf(offer) }))
  }

  /** The 402 to throw: requirements, why (`quota_exceeded` or a refused payment's code), the quota when known. */
  refusal(info: Pick<CostCallInfo, 'method' | 'path'>, why: { code: string; message: string; details?: Record<string, unknown> }): PaymentRequiredError {
    return new PaymentRequiredError(
      {
        version: 2,
        resource: { url: `${this.#origin}${info.path}`, description: describeCall(info), mimeType: 'application/json' },
        accepts: this.#corrected(this.requirements(info), why),
        extensions: { ...paymentIdentifierExtensions, ...this.#signIn?.declaration(`${this.#origin}${info.path}`) },
        error: why.code,
        message: why.message,
      },
      why.details,
    )
  }

  /**
   * A batch voucher refused for its running total: the batch requirement of its chain carries the channel's state
   * and the latest voucher the server holds (x402's corrective 402), so the payer's client resynchronises.
   */
  #corrected(accepts: PaymentRequirement[], why: { code: string; message: string }): PaymentRequirement[] {
    if (why.code !== BATCH_CUMULATIVE_MISMATCH) return accepts
    const found = this.#corrections.get(why.message)
    if (!found) return accepts
    this.#corrections.delete(why.message)
    return accepts.map((a) => (a.scheme === BATCH_SCHEME && a.network === found.network ? { ...a, extra: { ...a.extra, ...found.correction } } : a))
  }

  #keepCorrection(error: BatchCumulativeMismatchError): void {
    const t = Date.now()
    for (const [key, kept] of this.#corrections) if (t - kept.at > 60_000) this.#corrections.delete(key)
    if (error.correction) this.#corrections.set(error.shortMessage, { network: error.network, correction: error.correction, at: t })
  }

  /**
   * The 402 of a refused payment: its code and words, and — for `payment_expires_too_soon` (the minimum
   * validity) and `settlement_owed` (the payment owed) — what the client needs to fix it in `details`.
   */
  refused(info: Pick<CostCallInfo, 'method' | 'path'>, error: InvalidPaymentError): PaymentRequiredError {
    const details = DETAILED_REFUSALS.has(error.code) ? error.meta : undefined
    return this.refusal(info, { code: error.code, message: error.shortMessage, ...(details ? { details } : {}) })
  }

  /** True when the request carries `PAYMENT-SIGNATURE` or `X-PAYMENT`. */
  static offered(headers: HeaderBag): boolean {
    return headers['payment-signature'] !== undefined || headers['x-payment'] !== undefined
  }

  /**
   * Decodes, prechecks, claims and verifies the payment of one call. Throws 400 `invalid_payment_header` /
   * `unsupported_network`, 402 `InvalidPaymentError` (the caller answers with the requirements), 409
   * `payment_replayed` (the payload runs or ran another call), 502 `facilitator_unavailable`.
   */
  async begin(headers: HeaderBag, info: CostCallInfo): Promise<PaidCall> {
    const decoded = decodePaymentHeader(headers)
    if (!decoded) throw new InvalidPaymentError(InvalidPaymentReasons.facilitatorRejected, 'no payment header')
    if (this.#rails.isMeteredScheme(decoded.payload.accepted.scheme)) return this.#beginUpto(decoded, info)
    if (decoded.payload.accepted.scheme === BATCH_SCHEME) return this.#beginBatch(decoded, info)
    if (this.priceAtomic <= 0n) throw new InvalidPaymentError(InvalidPaymentReasons.schemeMismatch, 'scheme exact is not offered here; use upto')
    const chosen = this.#exactRequirements(info).find((r) => r.requirement.network === decoded.network)
    if (!chosen) throw new UnsupportedNetworkError(decoded.network)
    const { rail, requirement } = chosen
    const payment = rail.authorize(decoded, requirement, Math.floor(Date.now() / 1000), this.#window)
    await this.#assertNoDebt(payment.payer, info.wallet)
    const paymentId = `pay_${ulid()}`
    const releaseIdentifier = await this.#takeIdentifier(decoded, info, paymentId, `${requirement.network}|${payment.payer.toLowerCase()}|${info.wallet.toLowerCase()}`)
    // Claim the payment before the facilitator hears of it: concurrent replays, on this route or any other, find it taken.
    const claimed = await this.#ledger.claim({
      paymentId,
      payer: payment.payer,
      nonce: payment.nonce,
      wallet: info.wallet,
      route: info.route,
      network: requirement.network,
      asset: requirement.asset,
      payTo: requirement.payTo,
      amountAtomic: payment.amount,
      priceAtomic: this.priceAtomic,
      paymentPayload: decoded.payload,
    })
    if (!claimed) {
      await releaseIdentifier()
      throw new PaymentReplayedError()
    }
    try {
      const verdict = await rail.verifyHeld(this.#facilitator, decoded, requirement, payment)
      assertVerified(verdict)
    } catch (error) {
      await this.#ledger.release(paymentId)
      await releaseIdentifier()
      throw error
    }
    return new PaidCall({
      paymentId,
      payer: payment.payer.toLowerCase(),
      amountAtomic: payment.amount,
      info,
      settleDeadlineMs: settleDeadlineMs(payment.validBefore, this.#window),
      settle: async () => {
        let settled
        try {
          // x402's pending settlement: a broadcast not confirmed yet is retried once, reconciled by the facilitator
          settled = await rail.settleHeld(this.#facilitator, decoded, requirement, payment)
        } catch (error) {
          // Refused before it was sent anywhere: nothing settled. Otherwise the outcome is unknown: keep the claim.
          if (error instanceof FacilitatorUnavailableError && error.beforeSend) {
            await this.#ledger.release(paymentId)
            await releaseIdentifier()
          } else await this.#ledger.markSettleUnknown(paymentId, String(error))
          throw error
        }
        if (isSettlementPending(settled)) {
          // Still on its way after the retry: it may land, so the payment stays claimed (never reused) and the
          // call is not served; the chain decides (the ledger's settle_unknown rows are what recovery reads).
          await this.#ledger.markSettleUnknown(paymentId, `settlement_pending ${settled.transaction}`)
          throw new SettlementPendingError(settled.transaction)
        }
        if (settled.success !== true || typeof settled.transaction !== 'string' || settled.transaction === '') {
          await this.#ledger.release(paymentId)
          await releaseIdentifier()
          throw new InvalidPaymentError(
            settled.errorReason ?? InvalidPaymentReasons.settlementFailed,
            `settlement failed${settled.errorReason ? `: ${settled.errorReason}` : ''}${settled.errorMessage ? ` (${settled.errorMessage})` : ''}`,
          )
        }
        const settlement: CostSettlement = {
          success: true,
          transaction: settled.transaction,
          network: requirement.network,
          payer: settled.payer ?? payment.payer,
          payment_id: paymentId,
          amount: payment.amount.toString(),
          scheme: 'exact',
        }
        await this.#ledger.markSettled(paymentId, settled.transaction, settled)
        await this.#paidEvent(info, settlement, payment.amount, this.priceAtomic).catch((error: unknown) =>
          this.#logger?.error({ err: error, payment_id: paymentId }, 'llm.call.paid event could not be written'),
        )
        return settlement
      },
      release: async () => {
        await this.#ledger.release(paymentId)
        await releaseIdentifier()
      },
    })
  }

  /**
   * x402 payment-identifier: taken before anything is claimed or verified, so a retry with the identifier of a
   * call that ran (or runs) never pays again. Returns what gives it back (whenever the claim is given back).
   */
  async #takeIdentifier(decoded: DecodedPaymentHeader, info: CostCallInfo, paymentId: string, fingerprint: string): Promise<() => Promise<void>> {
    const identifier = paymentIdentifierOf(decoded.payload)
    const use = identifier ? { scope: `cost:${info.route}`, id: identifier, ref: paymentId, fingerprint } : undefined
    if (use) {
      const first = await this.#identifiers.take(use)
      if (!first.taken) {
        throw new PaymentReplayedError(first.fingerprint === use.fingerprint ? `this payment identifier already paid for call ${first.ref}` : 'this payment identifier was used for another payment')
      }
    }
    return async () => {
      if (use) await this.#identifiers.release(use)
    }
  }

  /** Served output whose `upto` settlement failed: a debt of the payer, retried and reconciled on the chain. */
  async #recordUptoDebt(d: {
    paymentId: string
    payer: string
    info: CostCallInfo
    requirement: PaymentRequirement
    amount: bigint
    capAtomic: bigint
    permit: { nonce: bigint; deadline: bigint }
    request: Parameters<typeof attemptSettle>[1]
    attempt: Exclude<Awaited<ReturnType<typeof attemptSettle>>, { kind: 'settled' }>
  }): Promise<void> {
    const { attempt } = d
    await this.#debts.record({
      paymentId: d.paymentId,
      payer: d.payer,
      wallet: d.info.wallet,
      route: d.info.route,
      network: d.requirement.network,
      scheme: 'upto',
      asset: d.requirement.asset,
      payTo: d.requirement.payTo,
      amountAtomic: d.amount,
      capAtomic: d.capAtomic,
      nonce: d.permit.nonce.toString(),
      validUntil: d.permit.deadline,
      settleRequest: d.request,
      status: attempt.kind === 'pending' ? 'pending' : 'owed',
      txHash: attempt.kind === 'pending' ? attempt.txHash : null,
      payerFault: attempt.kind === 'refused' && isPayerFault(attempt.reason),
      error: attempt.error,
    })
    this.#logger?.warn({ payment_id: d.paymentId, payer: d.payer, amount_atomic: d.amount.toString(), err: attempt.error }, 'settlement after a served call failed: recorded as a debt of the payer')
  }

  /**
   * An x402 `upto` payment: a Permit2 permit of at most `permitted.amount`. Same order as
   * `exact` — precheck (a maximum below the least a call costs is refused here, before any generation) →
   * payment-identifier → claim (network, payer, `permit2:<nonce>`) in `payment_claims` and `cost_payments` →
   * facilitator `/verify` (it simulates a settlement of the whole maximum: signature, balance, allowance) — but
   * the call settles only once it ended, for what it produced: ⌈tokens × price⌉, at least the minimum, at most
   * the smaller of the permit's maximum and the route's (generation is capped at that many tokens).
   */
  async #beginUpto(decoded: DecodedPaymentHeader, info: CostCallInfo): Promise<PaidCall> {
    if (!this.uptoEnabled) throw new InvalidPaymentError(InvalidPaymentReasons.schemeMismatch, 'scheme upto is not offered here; use exact')
    const rail = this.#rails.meteredRail(decoded.payload.accepted.scheme, decoded.network)
    if (!rail) throw new UnsupportedNetworkError(decoded.network)
    const pricing = this.tokenPricing
    const requirement = rail.requirementOf(this.#offer(info, pricing.maxAtomic))
    const permit = rail.check(decoded, requirement, pricing.minAtomic, Math.floor(Date.now() / 1000), this.#window)
    await this.#assertNoDebt(permit.from, info.wallet)
    const capAtomic = permit.amount < pricing.maxAtomic ? permit.amount : pricing.maxAtomic
    const paymentId = `pay_${ulid()}`
    const payer = permit.from.toLowerCase()
    const releaseIdentifier = await this.#takeIdentifier(decoded, info, paymentId, `${requirement.network}|upto|${payer}|${info.wallet.toLowerCase()}`)
    // What the tokens served so far cost, with its settle request: built here, so recovery needs no chain code.
    // null: nothing delivered yet (a whole answer before it is settled) — nothing owed, no settle request
    const checkpointOf = (tokens: number | null) => {
      if (tokens === null) return { tokens: 0, amountAtomic: 0n, request: null }
      const amountAtomic = meteredAmount(pricing, tokens, capAtomic)
      return { tokens, amountAtomic, request: rail.facilitatorRequest(decoded, requirement, amountAtomic) }
    }
    // Permit2 nonces are the payer's own namespace on Permit2, apart from the token's EIP-3009 nonces: prefixed.
    const claimed = await this.#ledger.claim({
      paymentId,
      payer,
      nonce: `permit2:${permit.nonce}`,
      wallet: info.wallet,
      route: info.route,
      network: requirement.network,
      asset: requirement.asset,
      payTo: requirement.payTo,
      amountAtomic: permit.amount,
      priceAtomic: capAtomic,
      paymentPayload: decoded.payload,
      // the first checkpoint (nothing delivered yet) rides on the claim: no write before the first token
      checkpoint: { ...checkpointOf(null), owner: this.#owner, validUntil: permit.deadline },
    })
    if (!claimed) {
      await releaseIdentifier()
      throw new PaymentReplayedError()
    }
    const release = async () => {
      await this.#ledger.release(paymentId)
      await releaseIdentifier()
    }
    const toVerify = rail.facilitatorRequest(decoded, requirement, permit.amount)
    try {
      const verdict = await this.#facilitator.verify(toVerify.paymentPayload, toVerify.paymentRequirements, toVerify.x402Version)
      assertVerified(verdict)
    } catch (error) {
      await release()
      throw error
    }
    const settle = async (tokens: number, delivered: boolean): Promise<CostSettlement> => {
      const amount = meteredAmount(pricing, tokens, capAtomic)
      const base = { success: true as const, network: requirement.network, payer, payment_id: paymentId, amount: amount.toString(), scheme: 'upto' as const }
      if (amount === 0n) {
        // Nothing due (a minimum of 0 and no token): no transaction; the permit stays claimed (one permit, one call).
        await this.#ledger.markSettled(paymentId, null, { ...base, transaction: '' })
        return { ...base, transaction: '' }
      }
      const request = rail.facilitatorRequest(decoded, requirement, amount)
      const attempt = await attemptSettle(this.#facilitator, request)
      if (attempt.kind !== 'settled') {
        // The claim stays whatever happened (the permit is never used for another call). Served output is a
        // debt of the payer: retried and reconciled on the chain, and until then the payer pays no other call.
        await this.#ledger.markSettleUnknown(paymentId, attempt.error)
        if (delivered) await this.#recordUptoDebt({ paymentId, payer, info, requirement, amount, capAtomic, permit, request, attempt })
        throw attempt.failure
      }
      const settled = attempt.response
      const settlement: CostSettlement = { ...base, transaction: settled.transaction }
      await this.#ledger.markSettled(paymentId, settled.transaction, settled)
      await this.#paidEvent(info, settlement, amount, capAtomic).catch((error: unknown) =>
        this.#logger?.error({ err: error, payment_id: paymentId }, 'llm.call.paid event could not be written'),
      )
      return settlement
    }
    return new PaidCall({
      paymentId,
      payer,
      amountAtomic: capAtomic,
      info,
      metered: { capAtomic, maxTokens: maxTokensFor(pricing, capAtomic) },
      settleDeadlineMs: settleDeadlineMs(permit.deadline, this.#window),
      settle,
      release,
      checkpoint: this.#checkpointWriter(paymentId, checkpointOf),
    })
  }

  /**
   * An x402 `batch-settlement` payment: a voucher (with a deposit, the first time or when the channel runs low)
   * whose running total must be exactly the channel's charged total + the requirement's amount. Same order as the
   * other schemes — local checks → payment-identifier → claim (network, payer, `batch:<channel>:<running total>`:
   * a voucher pays one call, on any route or instance) → the scheme's verification (which reserves the channel
   * for this call) — and the call is charged once it ended, for what it cost (the price per call, or its tokens ×
   * the price per token), never more than the voucher allows. Nothing moves on chain per call (a deposit does):
   * the claim jobs claim the vouchers in batches (src/x402/batch/BatchClaims.ts).
   */
  async #beginBatch(decoded: DecodedPaymentHeader, info: CostCallInfo): Promise<PaidCall> {
    const batch = this.#batch
    if (!batch || !this.#batchEnabled) throw new InvalidPaymentError(InvalidPaymentReasons.schemeMismatch, 'scheme batch-settlement is not offered here')
    const price = this.#batchPrice
    const requirement = batch.requirement(decoded.network, this.#offer(info, price))
    if (!requirement) throw new UnsupportedNetworkError(decoded.network)
    const voucher = checkBatchPayment(decoded, requirement)
    // A deposit carries an EIP-3009 authorization that must outlive the longest call (it settles after it);
    // a voucher has no deadline (it is good while the deposit is there).
    const validBefore = depositValidBefore(decoded.payload.payload)
    if (validBefore !== undefined) assertCoversWindow(validBefore, this.#window, Math.floor(Date.now() / 1000), 'deposit.authorization.erc3009Authorization.validBefore')
    await this.#assertNoDebt(voucher.payer, info.wallet)
    const paymentId = `pay_${ulid()}`
    const releaseIdentifier = await this.#takeIdentifier(decoded, info, paymentId, `${requirement.network}|batch|${voucher.payer}|${info.wallet.toLowerCase()}`)
    const pricing = this.tokenPricing
    const metered = pricing.perTokenMicro > 0n ? { capAtomic: price, maxTokens: maxTokensFor(pricing, price) } : undefined
    // Delivered so far: metered, its tokens × the price (at least the minimum); null (nothing delivered yet) and
    // per call, nothing — the first chunk settles a per-call price (a call killed before that served nothing).
    const checkpointOf = (tokens: number | null) => {
      const request: BatchCheckpoint = { scheme: BATCH_SCHEME, channelId: voucher.channelId, voucherTotal: voucher.maxClaimable.toString(), deposit: voucher.kind === 'deposit' }
      return { tokens: tokens ?? 0, amountAtomic: metered && tokens !== null ? meteredAmount(pricing, tokens, price) : 0n, request }
    }
    const claimed = await this.#ledger.claim({
      paymentId,
      payer: voucher.payer,
      nonce: `batch:${voucher.channelId}:${voucher.maxClaimable}`,
      wallet: info.wallet,
      route: info.route,
      network: requirement.network,
      asset: requirement.asset,
      payTo: requirement.payTo,
      amountAtomic: price,
      priceAtomic: price,
      paymentPayload: decoded.payload,
      // Checkpointed like `upto` (what the call served, this instance's heartbeat), so a replica charges a call
      // whose instance died mid-stream (`InterruptedCalls`) and its row is never left claimed for ever.
      checkpoint: { ...checkpointOf(null), owner: this.#owner },
    })
    if (!claimed) {
      await releaseIdentifier()
      throw new PaymentReplayedError('this voucher already paid for a call: sign the next running total')
    }
    const release = async () => {
      await this.#ledger.release(paymentId)
      await releaseIdentifier()
    }
    let hold
    try {
      hold = await batch.hold(decoded, requirement)
    } catch (error) {
      await release()
      if (error instanceof BatchCumulativeMismatchError) this.#keepCorrection(error)
      throw error
    }
    const settle = async (tokens: number): Promise<CostSettlement> => {
      const charge = metered ? meteredAmount(pricing, tokens, price) : price
      let settled
      try {
        settled = await hold.settle(charge)
      } catch (error) {
        // The voucher stays claimed (it is never used again). A deposit still pending after x402's retry may
        // land: the call's charge is then not on the channel (the server forgoes it, as on a lost channel
        // record); the payer's client keeps its running total, so its next voucher matches the server's.
        await this.#ledger.markSettleUnknown(paymentId, String(error))
        this.#logger?.warn({ err: error, payment_id: paymentId, channel: voucher.channelId }, 'batch-settlement charge not committed')
        throw error
      }
      const settlement: CostSettlement = {
        success: true,
        transaction: settled.transaction ?? '',
        network: requirement.network,
        payer: voucher.payer,
        payment_id: paymentId,
        amount: charge.toString(),
        scheme: 'batch-settlement',
        ...(settled.extra ? { extra: settled.extra } : {}),
      }
      // Nothing charged: the voucher bought nothing and its running total is the next call's again.
      if (charge === 0n) await release()
      else await this.#ledger.markSettled(paymentId, settled.transaction || null, settled)
      await this.#paidEvent(info, settlement, charge, price).catch((error: unknown) =>
        this.#logger?.error({ err: error, payment_id: paymentId }, 'llm.call.paid event could not be written'),
      )
      return settlement
    }
    return new PaidCall({
      paymentId,
      payer: voucher.payer,
      amountAtomic: price,
      info,
      metered,
      settleDeadlineMs: validBefore === undefined ? undefined : settleDeadlineMs(validBefore, this.#window),
      settle,
      release: async () => {
        await hold.cancel()
        await release()
      },
      checkpoint: this.#checkpointWriter(paymentId, checkpointOf),
    })
  }

  /**
   * A running call's checkpoint write (`PaidCallParts.checkpoint`): a failed write is logged and the next one tries
   * again — a heartbeat missing for the whole lease lets another replica take the call.
   */
  #checkpointWriter(paymentId: string, checkpointOf: (tokens: number | null) => UptoCheckpoint): PaidCallParts['checkpoint'] {
    return async (tokens) => {
      try {
        return await this.#ledger.checkpoint(paymentId, this.#owner, checkpointOf(tokens))
      } catch (error) {
        this.#logger?.warn({ err: error, payment_id: paymentId }, 'checkpoint not written')
        return undefined
      }
    }
  }

  /** Whether `batch-settlement` is offered (configured, and a call has a price to step the vouchers by). */
  get batchOffered(): boolean {
    return this.#batchEnabled
  }

  /**
   * A payer's cooperative refund of its `batch-settlement` channel (`GET /x402/batch-settlement/refund`):
   * without a payment, the 402 with the scheme's terms; with a `refund` payload, the gateway claims what the
   * channel was charged and returns the rest of the deposit. A refused refund is the 402 again, with its code
   * (and the channel's state when the voucher's running total was not the server's).
   */
  async refundBatch(headers: HeaderBag, info: Pick<CostCallInfo, 'method' | 'path'>): Promise<BatchRefundAnswer> {
    const batch = this.#batch
    if (!batch || !this.#batchEnabled) throw new BatchSettlementNotOfferedError()
    const offer = { ...this.#offer(info, this.#batchPrice), description: 'A refund of the unused batch-settlement deposit' }
    // the 402 with the scheme's terms (and the channel's state after a running-total mismatch), never cached
    const refusal = (why: { code: string; message: string }) =>
      new PaymentRequiredError(
        {
          version: 2,
          resource: { url: offer.resourceUrl, description: offer.description, mimeType: 'application/json' },
          accepts: this.#corrected(batch.requirements(offer), why),
          error: why.code,
          message: why.message,
        },
        undefined,
        { 'Cache-Control': 'no-store' },
      )
    const decoded = decodePaymentHeader(headers)
    if (!decoded) throw refusal({ code: 'payment_required', message: 'send a batch-settlement refund payload in PAYMENT-SIGNATURE' })
    const requirement = batch.requirement(decoded.network, offer)
    if (!requirement) throw new UnsupportedNetworkError(decoded.network)
    try {
      const refunded = await batch.refund(decoded, requirement)
      const state = (refunded.extra?.channelState ?? {}) as Record<string, unknown>
      return {
        status: 200,
        body: {
          channel_id: refunded.channelId,
          network: requirement.network,
          payer: refunded.payer,
          refunded_atomic: refunded.amount ?? '0',
          transaction: refunded.transaction,
          charged_atomic: String(state.chargedCumulativeAmount ?? state.totalClaimed ?? '0'),
        },
        headers: { [HEADER_PAYMENT_RESPONSE]: encodeBase64Json(refunded) },
      }
    } catch (error) {
      if (error instanceof BatchCumulativeMismatchError) this.#keepCorrection(error)
      if (error instanceof InvalidPaymentError) throw refusal({ code: error.code, message: error.shortMessage })
      throw error
    }
  }

  /**
   * A payer — or a session wallet — with a settlement owed (a served call whose settlement failed and is not
   * reconciled, or one the payer defaulted on) pays for no further call: 402 `settlement_owed`.
   */
  async #assertNoDebt(payer: string, wallet: string): Promise<void> {
    const debt = await this.#debts.blocking(payer, wallet)
    if (debt) throw settlementOwed(debt)
  }

  /** `llm.call.paid` (asyncapi/events.yaml): who paid which call, how much, which transaction. */
  #paidEvent(info: CostCallInfo, s: CostSettlement, amount: bigint, price: bigint) {
    return (
      this.#events?.emit({
        kind: 'llm.call.paid',
        actor: info.wallet.toLowerCase(),
        payload: {
          wallet: info.wallet.toLowerCase(),
          route: info.route,
          payment_id: s.payment_id,
          payer: s.payer.toLowerCase(),
          network: s.network,
          amount_atomic: amount.toString(),
          price_atomic: price.toString(),
          tx_hash: s.transaction,
        },
      }) ?? Promise.resolve()
    )
  }
}

function describeCall(info: Pick<CostCallInfo, 'method' | 'path'>): string {
  return `One cost call of ${info.method} ${info.path} past the daily quota`
}

/** What `GET /x402/batch-settlement/refund` answers when the refund is done (refused, it throws the 402). */
export type BatchRefundAnswer = {
  status: 200
  body: { channel_id: string; network: string; payer: string; refunded_atomic: string; transaction: string; charged_atomic: string }
  headers: Record<string, string>
}

/** The `validBefore` of a batch-settlement deposit's EIP-3009 authorization (undefined: not a deposit). */
function depositValidBefore(payload: Record<string, unknown>): bigint | undefined {
  if (payload.type !== 'deposit') return undefined
  const auth = (payload.deposit as { authorization?: { erc3009Authorization?: { validBefore?: unknown } } } | undefined)?.authorization?.erc3009Authorization
  return typeof auth?.validBefore === 'string' && /^\d{1,20}$/.test(auth.validBefore) ? BigInt(auth.validBefore) : undefined
}

/** `PAYMENT-RESPONSE` of a paid call: base64 of the v2 SettleResponse. */
export function paymentResponseHeader(s: CostSettlement): Record<string, string> {
  return { [HEADER_PAYMENT_RESPONSE]: encodeBase64Json(s) }
}

/** An `upto` payment: settled once the call ended, for its tokens; `maxTokens` caps the generation. */
export type Metered = { capAtomic: bigint; maxTokens: number }

type PaidCallParts = {
  paymentId: string
  payer: string
  /** `exact`: the authorised value; `upto`: the most the call may cost (until settled). */
  amountAtomic: bigint
  info: CostCallInfo
  metered?: Metered
  /** The latest wall-clock ms at which the settlement can still be submitted (deadline minus the rail's margin). */
  settleDeadlineMs: number | undefined
  settle: (tokens: number, delivered: boolean) => Promise<CostSettlement>
  release: () => Promise<void>
  /**
   * `upto`, `batch-settlement`: records the tokens delivered so far (null: none yet, nothing owed) and this
   * instance's heartbeat on the payment's row. False: the row is no longer this instance's (another replica took
   * the call over); undefined: not written (the database failed; the next one tries again).
   */
  checkpoint?: (tokens: number | null) => Promise<boolean | undefined>
}

/**
 * How often a running `upto` or `batch-settlement` call checkpoints (ms): what a payer is served past its last
 * checkpoint — at most this long of generation — is not billed if its instance dies (the bounded loss of a kill;
 * before the first checkpoint the call is billed the minimum, as any call that served no token). One small update
 * per running call per interval.
 */
export const CHECKPOINT_INTERVAL_MS = 1_000

/** A verified, claimed payment: settle it once the call produced output, or release it when it did not. */
export class PaidCall {
  readonly paymentId: string
  readonly payer: string
  readonly info: CostCallInfo
  /** Set on an `upto` payment: settle after the last byte, with the tokens produced. */
  readonly metered: Metered | undefined
  /**
   * The latest wall-clock time (ms since the epoch) at which this payment's settlement can still be submitted:
   * its deadline (`upto`) or `validBefore` (`exact`) minus the rail's settlement margin. A call must have ended
   * — and settle — before it; undefined when the payment has no deadline.
   */
  readonly settleDeadlineMs: number | undefined
  #amount: bigint
  #done: Promise<unknown> | undefined
  #checkpoints: NodeJS.Timeout | undefined
  readonly #parts: PaidCallParts

  constructor(parts: PaidCallParts) {
    this.paymentId = parts.paymentId
    this.payer = parts.payer
    this.#amount = parts.amountAtomic
    this.info = parts.info
    this.metered = parts.metered
    this.settleDeadlineMs = parts.settleDeadlineMs
    this.#parts = parts
  }

  /** `exact`: the authorised value; `upto`: the settled amount once settled (before: the most it may cost). */
  get amountAtomic(): bigint {
    return this.#amount
  }

  /**
   * Settles (once: a second call returns the first outcome). `tokens`: the completion tokens produced (`upto`).
   * `delivered` (default true): the output was served (or is, whatever the outcome) — an `upto` settlement that
   * then fails is recorded as a debt of the payer (`settlement_debts`), reconciled later; false when the caller
   * withholds the output if the settlement fails (nothing is owed then).
   */
  settle(tokens = 0, { delivered = true }: { delivered?: boolean } = {}): Promise<CostSettlement> {
    this.#stopCheckpoints()
    this.#done ??= this.#stillHeld(delivered ? tokens : null)
      .then(() => this.#parts.settle(tokens, delivered))
      .then((s) => {
        this.#amount = BigInt(s.amount)
        return s
      })
    return this.#done as Promise<CostSettlement>
  }

  /**
   * A last checkpoint before settling, which is also the check that the payment is still this instance's: a
   * process paused past the lease (not dead) finds its call taken over and billed by another replica for its last
   * checkpoint, and settles nothing. The write refreshes the heartbeat, so no replica takes the call while it
   * settles. A database that fails here does not stop the settlement (the claim is this instance's as far as it knows).
   */
  async #stillHeld(tokens: number | null): Promise<void> {
    const write = this.#parts.checkpoint
    if (!write) return
    if ((await write(tokens)) === false) {
      throw new CallTakenOverError('call_taken_over', `payment ${this.paymentId} was taken over by another replica while this one was silent past the lease; it bills the call's last checkpoint`)
    }
  }

  /** Gives the claim back unsettled (no-op after a settle). */
  release(): Promise<void> {
    this.#stopCheckpoints()
    if (this.#done) return Promise.resolve()
    this.#done = this.#parts.release()
    return this.#done as Promise<void>
  }

  /**
   * `upto` and `batch-settlement` (no-op for `exact`): from now until it is settled or released, checkpoints
   * `served()` tokens every `CHECKPOINT_INTERVAL_MS` (never two writes at once: a tick while one is in flight is
   * skipped). The claim carried the first checkpoint; each write is also the heartbeat that keeps other replicas
   * from taking the call (`InterruptedCalls`), so it runs from the start, the wait for the first token included.
   */
  keepCheckpoints(served: () => number | null): void {
    const write = this.#parts.checkpoint
    if (!write || this.#done || this.#checkpoints) return
    let writing = false
    this.#checkpoints = setInterval(() => {
      if (writing || this.#done) return
      writing = true
      void write(served()).finally(() => (writing = false))
    }, CHECKPOINT_INTERVAL_MS)
    this.#checkpoints.unref()
  }

  #stopCheckpoints(): void {
    clearInterval(this.#checkpoints)
    this.#checkpoints = undefined
  }
}

/** The refusals whose 402 carries `details` (the others say it in `message`; `details` stays the quota's). */
const DETAILED_REFUSALS: ReadonlySet<string> = new Set(['payment_expires_too_soon', 'settlement_owed'])

/** 402 `settlement_owed`: which payment is owed, how much, and its state (`owed`, `pending`, `defaulted`). */
function settlementOwed(debt: DebtRow): InvalidPaymentError {
  const what =
    debt.status === 'defaulted'
      ? 'could never be settled: the funds or the allowance were taken away after it was verified'
      : debt.status === 'pending'
        ? 'is pending on chain; it is reconciled from the chain, retry once it is settled'
        : 'failed and is being retried; retry once it is settled'
  return new InvalidPaymentError(
    InvalidPaymentReasons.settlementOwed,
    `the settlement of an earlier call (${debt.payment_id}, ${debt.amount_atomic} atomic units on ${debt.network}) ${what}: no further paid call for this payer or wallet until then`,
    { payment_id: debt.payment_id, network: debt.network, amount_atomic: debt.amount_atomic, status: debt.status, since: debt.created_at },
  )
}

/** A facilitator's `/verify` verdict: an invalid payment is refused (402) with its reason. */
function assertVerified(verdict: { isValid: boolean; invalidReason?: string; invalidMessage?: string }): void {
  if (verdict.isValid === true) return
  throw new InvalidPaymentError(
    verdict.invalidReason ?? InvalidPaymentReasons.facilitatorRejected,
    `payment rejected by the facilitator${verdict.invalidReason ? `: ${verdict.invalidReason}` : ''}${verdict.invalidMessage ? ` (${verdict.invalidMessage})` : ''}`,
  )
}
