import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import { insertedOnce } from '../db/insertedOnce.js'
import { jsonColumn } from '../db/jsonColumn.js'
import { PaymentClaims } from '../x402/PaymentClaims.js'

export type CostPaymentClaim = {
  paymentId: string
  payer: string
  nonce: string
  wallet: string
  route: string
  network: string
  asset: string
  payTo: string
  amountAtomic: bigint
  priceAtomic: bigint
  paymentPayload: unknown
  /**
   * An `upto` or `batch-settlement` call: its first checkpoint (0 tokens, the minimum) rides on the claim's
   * insert; `validUntil`: the permit's deadline (a batch voucher has none).
   */
  checkpoint?: UptoCheckpoint & { owner: string; validUntil?: bigint }
}

/**
 * What a running `upto` (or `batch-settlement`) call has served so far: its tokens, what they cost, and the
 * settle request for that (`batch-settlement`: the voucher to charge, `BatchCheckpoint`).
 */
export type UptoCheckpoint = { tokens: number; amountAtomic: bigint; request: unknown }


function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string }
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || /UNIQUE constraint/i.test(e?.message ?? '')
}

/**
 * `cost_payments` (migration 0010): the persisted claim of each payment payload. Every state change is one
 * conditional statement, so two gateway instances on one PostgreSQL database agree on who holds a claim.
 */
export class CostPaymentLedger {
  constructor(
    readonly db: Kysely<Database>,
    private readonly now: () => number,
  ) {}

  /**
   * Reserves the payment in the namespace every paid route shares (`payment_claims`), then (payer, nonce) here.
   * False when a key is taken: the payload paid, or is paying, another call or an upload. Two statements, not
   * one transaction: instances on one SQLite file (tests) would block each other's synchronous commits; a crash
   * between them leaves the payment claimed with no call — never reusable, so never paid twice.
   */
  async claim(c: CostPaymentClaim): Promise<boolean> {
    const t = this.now()
    if (!(await PaymentClaims.claim(this.db, { network: c.network, payer: c.payer, nonce: c.nonce, route: c.route, ref: c.paymentId }, t))) return false
    let inserted = false
    try {
      inserted = await this.#insert(this.db, c, t)
    } finally {
      if (!inserted) await PaymentClaims.release(this.db, c.paymentId)
    }
    return inserted
  }

  #insert(db: Kysely<Database>, c: CostPaymentClaim, t: number): Promise<boolean> {
    return insertedOnce(
      db
        .insertInto('cost_payments')
        .values({
          payment_id: c.paymentId,
          payer: c.payer.toLowerCase(),
          nonce: c.nonce.toLowerCase(),
          wallet: c.wallet.toLowerCase(),
          route: c.route,
          network: c.network,
          asset: c.asset,
          pay_to: c.payTo,
          amount_atomic: c.amountAtomic.toString(),
          price_atomic: c.priceAtomic.toString(),
          status: 'claimed',
          tx_hash: null,
          payment_payload: jsonColumn(c.paymentPayload),
          settlement: null,
          created_at: t,
          updated_at: t,
          ...(c.checkpoint
            ? {
                owner: c.checkpoint.owner,
                heartbeat_at: t,
                checkpoint_tokens: c.checkpoint.tokens,
                checkpoint_amount: c.checkpoint.amountAtomic.toString(),
                checkpoint_request: jsonColumn(c.checkpoint.request),
                valid_until: c.checkpoint.validUntil === undefined ? null : Number(c.checkpoint.validUntil),
              }
            : {}),
        })
        .onConflict((oc) => oc.doNothing()),
    )
  }

  /**
   * A running `upto` call's checkpoint and heartbeat: only while the row is still claimed by `owner` (a row
   * another replica took, or one settled meanwhile, is left as it is).
   */
  async checkpoint(paymentId: string, owner: string, c: UptoCheckpoint): Promise<boolean> {
    const t = this.now()
    const done = await this.db
      .updateTable('cost_payments')
      .set({ heartbeat_at: t, checkpoint_tokens: c.tokens, checkpoint_amount: c.amountAtomic.toString(), checkpoint_request: jsonColumn(c.request), updated_at: t })
      .where('payment_id', '=', paymentId)
      .where('status', '=', 'claimed')
      .where('owner', '=', owner)
      .executeTakeFirst()
    return Number(done.numUpdatedRows) === 1
  }

  /**
   * The call produced nothing (or the payment was refused): the claim goes, the payload may be used again.
   * `owner`: only while that replica holds it (a call taken over after its instance died).
   */
  async release(paymentId: string, owner?: string): Promise<void> {
    let drop = this.db.deleteFrom('cost_payments').where('payment_id', '=', paymentId).where('status', '=', 'claimed')
    if (owner !== undefined) drop = drop.where('owner', '=', owner)
    const dropped = await drop.executeTakeFirst()
    // the row first: a crash in between leaves the payment claimed (safe), never free with a call on record
    if (Number(dropped.numDeletedRows) > 0) await PaymentClaims.release(this.db, paymentId)
  }

  /** `txHash` null: nothing was due (an `upto` call that cost 0), no transaction. */
  async markSettled(paymentId: string, txHash: string | null, settlement: unknown): Promise<void> {
    await this.db
      .updateTable('cost_payments')
      .set({ status: 'settled', tx_hash: txHash, settlement: jsonColumn(settlement), updated_at: this.now() })
      .where('payment_id', '=', paymentId)
      .execute()
  }

  /** The settle call went out and its outcome is unknown: the claim stays (the payload is never reused). */
  async markSettleUnknown(paymentId: string, error: string): Promise<void> {
    await this.db
      .updateTable('cost_payments')
      .set({ status: 'settle_unknown', settlement: jsonColumn({ error }), updated_at: this.now() })
      .where('payment_id', '=', paymentId)
      .execute()
  }

  /**
   * A call taken over after its instance died (`InterruptedCalls`), its debt recorded: `settle_unknown` like any
   * settlement left to the reconciler — only while `owner` still holds it claimed.
   */
  async markInterrupted(paymentId: string, owner: string, why: string): Promise<void> {
    await this.db
      .updateTable('cost_payments')
      .set({ status: 'settle_unknown', settlement: jsonColumn({ error: why, interrupted: true }), updated_at: this.now() })
      .where('payment_id', '=', paymentId)
      .where('status', '=', 'claimed')
      .where('owner', '=', owner)
      .execute()
  }

  /**
   * A `batch-settlement` call taken over after its instance died, its checkpoint charged on the channel:
   * `settled` (the claim jobs claim it with the channel's voucher) — only while `owner` still holds it claimed.
   */
  async markInterruptedSettled(paymentId: string, owner: string, settlement: unknown): Promise<void> {
    await this.db
      .updateTable('cost_payments')
      .set({ status: 'settled', tx_hash: null, settlement: jsonColumn(settlement), updated_at: this.now() })
      .where('payment_id', '=', paymentId)
      .where('status', '=', 'claimed')
      .where('owner', '=', owner)
      .execute()
  }

  async get(paymentId: string) {
    return this.db.selectFrom('cost_payments').selectAll().where('payment_id', '=', paymentId).executeTakeFirst()
  }
}
