import type { Selectable } from 'kysely'
import type { CostPaymentsTable } from '../db/migrations/0010_cost_ledger.js'
import type { Logger } from '../shared/logger.js'
import type { InterruptedCharge, InterruptedVoucher } from '../x402/batch/chargeInterrupted.js'
import type { CostPaymentLedger } from './CostPaymentLedger.js'
import type { SettlementDebts } from './SettlementDebts.js'
import type { UsageLedger } from './UsageLedger.js'

/**
 * How long a running `upto` call's heartbeat may be silent before another replica takes the call for dead (s):
 * thirty checkpoint intervals, so a busy event loop or a slow database write never makes a live call look dead.
 */
export const UPTO_LEASE_S = 30

/** The `checkpoint_request` of a `batch-settlement` call: the voucher its charge rides on. */
export type BatchCheckpoint = { scheme: 'batch-settlement'; channelId: string; voucherTotal: string; deposit: boolean }

/** Where a `batch-settlement` call's charge is committed (`BatchSettlement`); absent: batch rows are left to replicas that have it. */
export type InterruptedBatch = { chargeInterrupted(network: string, voucher: InterruptedVoucher): Promise<InterruptedCharge> }

type PaymentRow = Selectable<CostPaymentsTable>

export type InterruptedCallsOptions = {
  ledger: CostPaymentLedger
  debts: SettlementDebts
  /** The usage ledger: a taken call's usage row (its checkpoint), once per payment. */
  usage: UsageLedger
  batch?: InterruptedBatch | undefined
  /** This replica's name: it takes the interrupted call over (`cost_payments.owner`). */
  owner: string
  /** Epoch seconds. */
  now: () => number
  logger?: Logger | undefined
  leaseS?: number
}

/**
 * Paid calls whose instance died mid-stream (kill, out of memory, machine lost): the payer was served tokens and
 * the call never settled. `upto` and `batch-settlement` calls checkpoint what they served on their
 * `cost_payments` row (see `PaidCall.keepCheckpoints`); a row still `claimed` with a heartbeat older than the
 * lease is taken by one replica — one conditional update, so exactly one replica takes each, and never while its
 * instance still writes checkpoints — which bills the last checkpoint and records the call's usage row:
 *
 * - `upto`: a settlement debt of the checkpoint (the tokens served by then, never above the cap, with the settle
 *   request built for that amount). The reconciler settles it like any other debt, and until then the payer
 *   pays for no further call.
 * - `batch-settlement`: the checkpoint is charged on the channel, on the voucher the payer signed for this call
 *   (`chargeInterrupted`: only while the channel still holds it at the total it was signed on, so never twice
 *   and never above the voucher); the claim jobs claim it with the others. Nothing charged (a per-call price
 *   whose first chunk never went out, a minimum of 0): the claim is released and the same voucher pays the next
 *   call. A voucher that came with its deposit is not charged — the deposit goes on chain only with the charge
 *   the dead instance never sent — and is released so the payer can deposit again; a channel that moved on
 *   (refunded meanwhile) cannot be charged either. Either way the row leaves `claimed`: none stays stuck.
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
    let stale = this.#o.ledger.db
      .selectFrom('cost_payments')
      .select(['payment_id', 'heartbeat_at'])
      .where('status', '=', 'claimed')
      .where('heartbeat_at', 'is not', null)
      .where('heartbeat_at', '<', this.#o.now() - this.#leaseS)
    // a replica without batch-settlement leaves its rows to one that has it
    if (!this.#o.batch) stale = stale.where('nonce', 'not like', 'batch:%')
    const rows = await stale.orderBy('heartbeat_at').limit(limit).execute()
    const taken: string[] = []
    for (const { payment_id, heartbeat_at } of rows) {
      try {
        if (await this.#recover(payment_id, Number(heartbeat_at))) taken.push(payment_id)
      } catch (error) {
        // one row that cannot be billed here does not hold back the others; its take lapses after the lease
        this.#o.logger?.error({ err: error, payment_id }, 'interrupted call: not billed by this replica')
      }
    }
    return taken
  }

  /** One row, if this replica takes it: billed for its checkpoint, its usage recorded. */
  async #recover(paymentId: string, lastHeartbeat: number): Promise<boolean> {
    const row = await this.#take(paymentId)
    if (!row) return false
    if (row.nonce.startsWith('batch:')) await this.#recoverBatch(row, lastHeartbeat)
    else await this.#recoverUpto(row, lastHeartbeat)
    return true
  }

  /** `upto`: a debt of the checkpoint (nothing due: settled as 0). */
  async #recoverUpto(row: PaymentRow, lastHeartbeat: number): Promise<void> {
    const paymentId = row.payment_id
    const amount = BigInt(row.checkpoint_amount ?? '0')
    const why = `the instance serving the call stopped mid-stream; its last checkpoint: ${row.checkpoint_tokens ?? 0} tokens`
    // a permit already past its deadline is closed unsettled by the reconciler: nothing will be paid
    const billed = amount > 0n && Number(row.valid_until ?? 0) > this.#o.now() ? amount : null
    if (amount === 0n) {
      await this.#recordUsage(row, lastHeartbeat, null)
      await this.#o.ledger.markSettled(paymentId, null, { success: true, transaction: '', network: row.network, payer: row.payer, payment_id: paymentId, amount: '0', scheme: 'upto', resolution: 'interrupted' })
      return
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
    // after the debt, before the row leaves `claimed` (a crash in between: another replica takes the row again,
    // and the debt and the usage row are each recorded once)
    await this.#recordUsage(row, lastHeartbeat, billed)
    await this.#o.ledger.markInterrupted(paymentId, this.#o.owner, why)
    this.#o.logger?.warn({ payment_id: paymentId, payer: row.payer, amount_atomic: amount.toString(), tokens: row.checkpoint_tokens }, 'upto call interrupted mid-stream: its checkpoint recorded as a debt of the payer')
  }

  /** `batch-settlement`: the checkpoint charged on the channel (see the class comment). */
  async #recoverBatch(row: PaymentRow, lastHeartbeat: number): Promise<void> {
    const paymentId = row.payment_id
    const checkpoint = JSON.parse(row.checkpoint_request ?? 'null') as BatchCheckpoint
    const amount = BigInt(row.checkpoint_amount ?? '0')
    const voucher = { channelId: checkpoint.channelId, voucherTotal: BigInt(checkpoint.voucherTotal), stepAtomic: BigInt(row.price_atomic) }
    // a deposit's voucher: nothing charged (its deposit never reached the chain), the reservation ended
    const charge = checkpoint.deposit ? 0n : amount
    const charged = await (this.#o.batch as InterruptedBatch).chargeInterrupted(row.network, { ...voucher, chargeAtomic: charge })
    const billed = charged === 'charged' && charge > 0n ? charge : null
    await this.#recordUsage(row, lastHeartbeat, billed)
    const log = { payment_id: paymentId, payer: row.payer, channel: checkpoint.channelId, amount_atomic: (billed ?? 0n).toString(), tokens: row.checkpoint_tokens }
    if (billed !== null) {
      const settlement = { success: true, transaction: '', network: row.network, payer: row.payer, payment_id: paymentId, amount: billed.toString(), scheme: 'batch-settlement', resolution: 'interrupted' }
      await this.#o.ledger.markInterruptedSettled(paymentId, this.#o.owner, settlement)
      this.#o.logger?.warn(log, 'batch-settlement call interrupted mid-stream: its checkpoint charged on the channel')
    } else if (charged === 'charged' || checkpoint.deposit) {
      // nothing charged: the voucher (and its deposit) may pay another call, as after a call that produced nothing
      await this.#o.ledger.release(paymentId, this.#o.owner)
      this.#o.logger?.warn(log, 'batch-settlement call interrupted mid-stream: nothing charged, its voucher released')
    } else {
      await this.#o.ledger.markInterrupted(paymentId, this.#o.owner, `the instance serving the call stopped mid-stream and its channel moved on (refunded or closed): ${amount} not charged`)
      this.#o.logger?.warn(log, 'batch-settlement call interrupted mid-stream: its channel moved on, not charged')
    }
  }

  /**
   * The call's usage row, as the meter would have written it had the call ended: the tokens of the last
   * checkpoint (the completion tokens; the prompt's count was the model server's last word, never heard), what it
   * is billed and the payment (null when nothing is), outcome `error`. Once per payment, whichever replica writes it.
   */
  async #recordUsage(row: PaymentRow, lastHeartbeat: number, billed: bigint | null): Promise<void> {
    const tokens = Number(row.checkpoint_tokens ?? 0)
    await this.#o.usage.recordInterrupted(row.payment_id, {
      wallet: row.wallet,
      route: row.route,
      // the payment's row does not name the model (the request may not have either)
      model: 'unknown',
      promptTokens: 0,
      completionTokens: tokens,
      durationMs: Math.max(0, lastHeartbeat - Number(row.created_at)) * 1000,
      ttftMs: null,
      // checkpoints move only while a stream passes tokens on: headers (200) and output were sent
      streamed: tokens > 0,
      outcome: 'error',
      status: tokens > 0 ? 200 : 502,
      paidBy: 'payment',
      paymentId: billed === null ? null : row.payment_id,
      amountAtomic: billed,
    })
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
