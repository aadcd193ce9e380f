import type { Logger } from '../shared/logger.js'
import type { CostPaymentLedger } from './CostPaymentLedger.js'
import type { SettlementDebts } from './SettlementDebts.js'

/**
 * How long a running `upto` call's heartbeat may be silent before another replica takes the call for dead (s):
 * thirty checkpoint intervals, so a busy event loop or a slow database write never makes a live call look dead.
 */
export const UPTO_LEASE_S = 30

export type InterruptedCallsOptions = {
  ledger: CostPaymentLedger
  debts: SettlementDebts
  /** This replica's name: it takes the interrupted call over (`cost_payments.owner`). */
  owner: string
  /** Epoch seconds. */
  now: () => number
  logger?: Logger | undefined
  leaseS?: number
}

/**
 * `upto` calls whose instance died mid-stream (kill, out of memory, machine lost): the payer was served tokens
 * and the call never settled. Their `cost_payments` row is still `claimed` with a heartbeat older than the lease;
 * a replica takes it — one conditional update, so exactly one replica takes each, and never while its instance
 * still writes checkpoints — and records a settlement debt of the last checkpoint (the tokens served by then,
 * never above the cap, with the settle request built for that amount). The reconciler then settles it like any
 * other debt, and until it is settled the payer pays for no further call.
 */
export class InterruptedCalls {
  readonly #o: InterruptedCallsOptions
  readonly #leaseS: number

  constructor(o: InterruptedCallsOptions) {
    this.#o = o
    this.#leaseS = o.leaseS ?? UPTO_LEASE_S
  }

  /** Takes the interrupted calls (at most `limit`, oldest heartbeat first); returns the ids of those it took. */
  async sweep(limit = 20): Promise<string[]> {
    const rows = await this.#o.ledger.db
      .selectFrom('cost_payments')
      .select('payment_id')
      .where('status', '=', 'claimed')
      .where('heartbeat_at', 'is not', null)
      .where('heartbeat_at', '<', this.#o.now() - this.#leaseS)
      .orderBy('heartbeat_at')
      .limit(limit)
      .execute()
    const taken: string[] = []
    for (const { payment_id } of rows) if (await this.#recover(payment_id)) taken.push(payment_id)
    return taken
  }

  /** One row, if this replica takes it: a debt of its checkpoint (nothing due: settled as 0). */
  async #recover(paymentId: string): Promise<boolean> {
    const row = await this.#take(paymentId)
    if (!row) return false
    const amount = BigInt(row.checkpoint_amount ?? '0')
    const why = `the instance serving the call stopped mid-stream; its last checkpoint: ${row.checkpoint_tokens ?? 0} tokens`
    if (amount === 0n) {
      await this.#o.ledger.markSettled(paymentId, null, { success: true, transaction: '', network: row.network, payer: row.payer, payment_id: paymentId, amount: '0', scheme: 'upto', resolution: 'interrupted' })
      return true
    }
    await this.#o.debts.record({
      paymentId,
      payer: row.payer,
      wallet: row.wallet,
      route: row.route,
      network: row.network,
      scheme: 'upto',
      asset: row.asset,
      payTo: row.pay_to,
      amountAtomic: amount,
      capAtomic: BigInt(row.price_atomic),
      nonce: row.nonce.replace(/^permit2:/, ''),
      // a deadline already passed is recorded all the same: the reconciler closes it as it closes any expired debt
      validUntil: BigInt(row.valid_until ?? 0),
      settleRequest: JSON.parse(row.checkpoint_request ?? 'null') as unknown,
      status: 'owed',
      txHash: null,
      payerFault: false,
      error: why,
    })
    // after the debt (a crash in between: another replica takes the row again, and the debt is recorded once)
    await this.#o.ledger.markInterrupted(paymentId, this.#o.owner, why)
    this.#o.logger?.warn({ payment_id: paymentId, payer: row.payer, amount_atomic: amount.toString(), tokens: row.checkpoint_tokens }, 'upto call interrupted mid-stream: its checkpoint recorded as a debt of the payer')
    return true
  }

  /** The row, once this replica holds it: still claimed and its heartbeat still stale when the update ran. */
  async #take(paymentId: string) {
    const t = this.#o.now()
    const done = await this.#o.ledger.db
      .updateTable('cost_payments')
      .set({ owner: this.#o.owner, heartbeat_at: t, updated_at: t })
      .where('payment_id', '=', paymentId)
      .where('status', '=', 'claimed')
      .where('heartbeat_at', '<', t - this.#leaseS)
      .executeTakeFirst()
    if (Number(done.numUpdatedRows) !== 1) return undefined
    const row = await this.#o.ledger.get(paymentId)
    return row?.status === 'claimed' && row.owner === this.#o.owner && row.checkpoint_request !== null ? row : undefined
  }
}
