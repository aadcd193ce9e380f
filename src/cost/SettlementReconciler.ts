import type { EventSink } from '../catalogue/EventSink.js'
import type { Logger } from '../shared/logger.js'
import type { Facilitator, FacilitatorSettleResponse, PaymentPayload, RailRegistry, UptoRecoveryVerdict } from '../x402/index.js'
import { FacilitatorUnavailableError, InvalidPaymentError, InvalidPaymentReasons, settleWithPendingRetry } from '../x402/index.js'
import type { CostPaymentLedger } from './CostPaymentLedger.js'
import type { DebtRow, SettlementDebts } from './SettlementDebts.js'

/** x402's reason for a settlement broadcast but not confirmed yet: resolved by reading, never by settling again. */
const SETTLEMENT_PENDING = 'settlement_pending'

/**
 * Facilitator reasons that mean the payer took the money away after the payment was verified (balance,
 * Permit2 allowance, a cancelled nonce, a reverted transfer): a debt that then expires is the payer's default.
 */
const PAYER_FAULT_REASONS: ReadonlySet<string> = new Set([
  'permit2_allowance_required',
  'permit2_insufficient_balance',
  'permit2_simulation_failed',
  'permit2_invalid_nonce',
  'invalid_transaction_state',
  'invalid_exact_evm_insufficient_balance',
  'invalid_exact_evm_nonce_already_used',
  'invalid_exact_evm_transaction_simulation_failed',
])

export const isPayerFault = (reason: string | undefined): boolean => reason !== undefined && PAYER_FAULT_REASONS.has(reason)

/**
 * What one settle attempt came to, as a debt sees it; `failure` is what the caller of a failed one is thrown
 * (the transport error as it came, or a 402 `InvalidPaymentError` with the facilitator's reason).
 */
export type SettleAttempt =
  | { kind: 'settled'; transaction: string; response: FacilitatorSettleResponse }
  /** May be on its way: a broadcast transaction (`txHash`) or a call whose outcome is unknown (null). */
  | { kind: 'pending'; txHash: string | null; error: string; failure: unknown }
  /** Nothing moved: refused (`reason`), or never sent. */
  | { kind: 'refused'; reason: string | undefined; error: string; failure: unknown }

/** One settle call, classified; never throws for the facilitator's sake. */
export async function attemptSettle(facilitator: Facilitator, request: { x402Version: 1 | 2; paymentPayload: PaymentPayload; paymentRequirements: unknown }): Promise<SettleAttempt> {
  let settled: FacilitatorSettleResponse
  try {
    // x402 2.24: a `settlement_pending` answer is retried once with the same payload (the facilitator reconciles)
    settled = await settleWithPendingRetry(facilitator, request.paymentPayload, request.paymentRequirements, request.x402Version)
  } catch (error) {
    if (error instanceof FacilitatorUnavailableError && error.beforeSend) return { kind: 'refused', reason: undefined, error: String(error), failure: error }
    return { kind: 'pending', txHash: null, error: String(error), failure: error }
  }
  if (settled.success === true && typeof settled.transaction === 'string' && settled.transaction !== '') return { kind: 'settled', transaction: settled.transaction, response: settled }
  const error = `settlement failed: ${settled.errorReason ?? ''} ${settled.errorMessage ?? ''}`.trim()
  const failure = new InvalidPaymentError(
    settled.errorReason ?? InvalidPaymentReasons.settlementFailed,
    `settlement failed${settled.errorReason ? `: ${settled.errorReason}` : ''}${settled.errorMessage ? ` (${settled.errorMessage})` : ''}`,
  )
  if (settled.errorReason === SETTLEMENT_PENDING) return { kind: 'pending', txHash: settled.transaction || null, error, failure }
  return { kind: 'refused', reason: settled.errorReason, error, failure }
}

export type SettlementReconcilerOptions = {
  debts: SettlementDebts
  payments: CostPaymentLedger
  rails: RailRegistry
  facilitator: Facilitator
  /** This replica (`gateway_instances`): the lease holder's name. */
  owner: string
  /** Epoch seconds. */
  now: () => number
  events?: EventSink | undefined
  logger?: Logger | undefined
  /** How long one replica holds a debt it works on (s): longer than a settle call. */
  leaseS?: number
}

/** Seconds until the next look at a debt after `attempts` looks: 5 s doubling, at most 5 min. */
export const backoffS = (attempts: number): number => Math.min(5 * 2 ** Math.min(attempts, 10), 300)

/**
 * Reconciles settlement debts (x402 2.24's pending-settlement semantics): a debt whose settlement may be on its
 * way (`pending`) is decided by reading the chain — the broadcast's receipt, else the payment's nonce — and
 * settled again only when the chain shows nothing can have moved; an `owed` debt is settled again through the
 * facilitator, with the very request that failed (the same amount: what was served, never above what the
 * payer authorised), until it is paid or its deadline passes. Replicas share the work through the debt's lease;
 * the chain's nonce (Permit2's, EIP-3009's) makes a second transfer of one payment impossible anyway.
 */
export class SettlementReconciler {
  readonly #o: SettlementReconcilerOptions
  readonly #leaseS: number

  constructor(options: SettlementReconcilerOptions) {
    this.#o = options
    this.#leaseS = options.leaseS ?? 120
  }

  /** Every debt due now (at most `limit`), one after another; returns how many were looked at. */
  async reconcileDue(limit = 20): Promise<number> {
    let looked = 0
    for (const paymentId of await this.#o.debts.due(limit)) {
      if (await this.reconcile(paymentId)) looked++
    }
    return looked
  }

  /** Leases and reconciles one debt; undefined when it is closed or another replica holds it. */
  async reconcile(paymentId: string): Promise<DebtRow | undefined> {
    const debt = await this.#o.debts.lease(paymentId, this.#o.owner, this.#leaseS)
    if (!debt) return undefined
    try {
      await this.#decide(debt)
    } catch (error) {
      // a chain or database read failed: look again later, nothing was decided
      this.#o.logger?.warn({ err: error, payment_id: debt.payment_id }, 'settlement debt: reconciliation failed, retried later')
      await this.#o.debts.later(debt.payment_id, this.#o.owner, {
        status: debt.status as 'owed' | 'pending',
        txHash: debt.tx_hash,
        error: String(error),
        payerFault: false,
        nextAt: this.#o.now() + backoffS(debt.attempts),
      })
    }
    return this.#o.debts.get(paymentId)
  }

  async #decide(debt: DebtRow): Promise<void> {
    // the metered rail that recorded the debt (same scheme, same network) reads its chain
    const rail = this.#o.rails.meteredRail(debt.scheme, debt.network)
    const now = this.#o.now()
    if (rail?.canRecover) {
      const verdict = await rail.recover(
        { payer: debt.payer, payTo: debt.pay_to, asset: debt.asset, amount: BigInt(debt.amount_atomic), nonce: BigInt(debt.nonce), deadline: BigInt(debt.valid_until), txHash: debt.tx_hash },
        now,
      )
      return this.#onChain(debt, verdict)
    }
    // No chain to read: the facilitator reconciles a broadcast it knows (x402 pending settlements); a debt on
    // which nothing can have landed (`owed`) closes at its deadline.
    if (now > debt.valid_until) {
      if (debt.status === 'owed') return this.#close(debt, debt.payer_fault === 1, 'the payment expired unsettled')
      return this.#later(debt, { status: 'pending', txHash: debt.tx_hash, error: 'deadline passed with a settlement possibly on its way and no chain to read: an operator decides', payerFault: false }, 3600)
    }
    return this.#retry(debt)
  }

  async #onChain(debt: DebtRow, verdict: UptoRecoveryVerdict): Promise<void> {
    switch (verdict.outcome) {
      case 'paid':
        return this.#paid(debt, verdict.transaction, 'confirmed_on_chain', undefined)
      case 'never':
        return this.#close(debt, verdict.payerFault || debt.payer_fault === 1, verdict.why)
      case 'wait':
        return this.#later(debt, { status: 'pending', txHash: debt.tx_hash, error: verdict.why, payerFault: false })
      case 'unused':
        // Nothing moved and nothing is on its way: settling again cannot pay twice. Under 6 s before the
        // deadline the facilitator refuses it: the debt is looked at again once the deadline passed.
        if (this.#o.now() + 6 >= debt.valid_until) {
          return this.#later(debt, { status: 'owed', txHash: null, error: 'too close to the deadline to settle', payerFault: false }, debt.valid_until - this.#o.now() + 1)
        }
        return this.#retry(debt)
    }
  }

  async #retry(debt: DebtRow): Promise<void> {
    const request = JSON.parse(debt.settle_request) as { x402Version: 1 | 2; paymentPayload: PaymentPayload; paymentRequirements: unknown }
    const attempt = await attemptSettle(this.#o.facilitator, request)
    if (attempt.kind === 'settled') return this.#paid(debt, attempt.transaction, 'settled_on_retry', attempt.response)
    if (attempt.kind === 'pending') return this.#later(debt, { status: 'pending', txHash: attempt.txHash ?? debt.tx_hash, error: attempt.error, payerFault: false })
    // Refused: nothing moved by this call. A debt already `pending` (an earlier broadcast may land) stays so.
    return this.#later(debt, { status: debt.status as 'owed' | 'pending', txHash: debt.tx_hash, error: attempt.error, payerFault: isPayerFault(attempt.reason) })
  }

  async #paid(debt: DebtRow, transaction: string, resolution: 'settled_on_retry' | 'confirmed_on_chain', response: FacilitatorSettleResponse | undefined): Promise<void> {
    if (!(await this.#o.debts.settled(debt.payment_id, this.#o.owner, transaction, resolution))) return
    const settlement = { success: true, transaction, network: debt.network, payer: debt.payer, payment_id: debt.payment_id, amount: debt.amount_atomic, scheme: debt.scheme, resolution, ...(response ? { facilitator: response } : {}) }
    await this.#o.payments.markSettled(debt.payment_id, transaction, settlement)
    this.#o.logger?.info({ payment_id: debt.payment_id, tx_hash: transaction, resolution }, 'settlement debt paid')
    await this.#o.events
      ?.emit({
        kind: 'llm.call.paid',
        actor: debt.wallet,
        payload: { wallet: debt.wallet, route: debt.route, payment_id: debt.payment_id, payer: debt.payer, network: debt.network, amount_atomic: debt.amount_atomic, price_atomic: debt.cap_atomic, tx_hash: transaction },
      })
      .catch((error: unknown) => this.#o.logger?.error({ err: error, payment_id: debt.payment_id }, 'llm.call.paid event could not be written'))
  }

  /** Can never be paid: `defaulted` when the payer took the money away at some point (it keeps refusing them), else `forgiven`. */
  async #close(debt: DebtRow, payerFault: boolean, why: string): Promise<void> {
    const status = payerFault ? 'defaulted' : 'forgiven'
    if (!(await this.#o.debts.closed(debt.payment_id, this.#o.owner, status, payerFault ? 'payer_default' : 'unsettleable', why))) return
    this.#o.logger?.warn({ payment_id: debt.payment_id, payer: debt.payer, amount_atomic: debt.amount_atomic, status, why }, 'settlement debt can never be paid')
  }

  async #later(debt: DebtRow, change: { status: 'owed' | 'pending'; txHash: string | null; error: string; payerFault: boolean }, afterS = backoffS(debt.attempts)): Promise<void> {
    await this.#o.debts.later(debt.payment_id, this.#o.owner, { ...change, nextAt: this.#o.now() + afterS })
  }
}
