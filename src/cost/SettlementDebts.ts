import type { Kysely, Selectable } from 'kysely'
import type { Database } from '../db/Database.js'
import { insertedOnce } from '../db/insertedOnce.js'
import { jsonColumn } from '../db/jsonColumn.js'
import type { SettlementDebtsTable } from '../db/migrations/0017_settlement_debts.js'

export type DebtRow = Selectable<SettlementDebtsTable>
export type DebtStatus = 'owed' | 'pending' | 'settled' | 'defaulted' | 'forgiven'
/** The states that refuse the payer (and the session wallet) further paid calls. */
export const BLOCKING_STATUSES: readonly DebtStatus[] = ['owed', 'pending', 'defaulted']
/** The states the reconciler works on. */
const OPEN: readonly DebtStatus[] = ['owed', 'pending']

/** How the failed settlement of a served call is recorded. */
export type NewDebt = {
  paymentId: string
  payer: string
  wallet: string
  route: string
  network: string
  scheme: 'upto' | 'exact'
  asset: string
  payTo: string
  amountAtomic: bigint
  capAtomic: bigint
  nonce: string
  /** The payment's deadline, epoch seconds. */
  validUntil: bigint
  /** `{x402Version, paymentPayload, paymentRequirements}` exactly as the failed settle sent it. */
  settleRequest: unknown
  /** `pending` when a settlement may be on its way (broadcast, or a call whose outcome is unknown). */
  status: 'owed' | 'pending'
  txHash: string | null
  payerFault: boolean
  error: string
}

/**
 * `settlement_debts` (migration 0017): served calls whose settlement failed. Every change of state is one
 * conditional statement on the state it leaves and the lease it holds, so replicas on one database agree.
 */
export class SettlementDebts {
  constructor(
    readonly db: Kysely<Database>,
    private readonly now: () => number,
  ) {}

  /** Records the debt of a served call (once per payment: a second record of the same payment is ignored). */
  async record(d: NewDebt): Promise<boolean> {
    const t = this.now()
    if (d.amountAtomic > d.capAtomic) throw new Error(`a debt of ${d.amountAtomic} above the authorised ${d.capAtomic}`)
    return insertedOnce(
      this.db
        .insertInto('settlement_debts')
        .values({
          payment_id: d.paymentId,
          payer: d.payer.toLowerCase(),
          wallet: d.wallet.toLowerCase(),
          route: d.route,
          network: d.network,
          scheme: d.scheme,
          asset: d.asset,
          pay_to: d.payTo,
          amount_atomic: d.amountAtomic.toString(),
          cap_atomic: d.capAtomic.toString(),
          nonce: d.nonce,
          valid_until: Number(d.validUntil),
          settle_request: jsonColumn(d.settleRequest),
          status: d.status,
          resolution: null,
          payer_fault: d.payerFault ? 1 : 0,
          tx_hash: d.txHash,
          attempts: 1,
          // first look again shortly: a transient failure (or a pending broadcast) is often over in seconds
          next_attempt_at: t + 5,
          lease_owner: null,
          lease_until: 0,
          last_error: d.error.slice(0, 2000),
          created_at: t,
          updated_at: t,
          resolved_at: null,
        })
        .onConflict((oc) => oc.doNothing()),
    )
  }

  /** The oldest debt that refuses `payer` or `wallet` further paid calls; undefined when there is none. */
  async blocking(payer: string, wallet: string): Promise<DebtRow | undefined> {
    return this.db
      .selectFrom('settlement_debts')
      .selectAll()
      .where((eb) => eb.or([eb('payer', '=', payer.toLowerCase()), eb('wallet', '=', wallet.toLowerCase())]))
      .where('status', 'in', [...BLOCKING_STATUSES])
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst()
  }

  get(paymentId: string): Promise<DebtRow | undefined> {
    return this.db.selectFrom('settlement_debts').selectAll().where('payment_id', '=', paymentId).executeTakeFirst()
  }

  /** Ids of open debts due for another look (at most `limit`, oldest first). */
  async due(limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('settlement_debts')
      .select('payment_id')
      .where('status', 'in', [...OPEN])
      .where('next_attempt_at', '<=', this.now())
      .where('lease_until', '<', this.now())
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute()
    return rows.map((r) => r.payment_id)
  }

  /**
   * Takes an open debt for `owner` for `leaseS` seconds — one conditional update, so exactly one look at a time
   * wins it, on any replica — and returns it; undefined when it is closed or a lease on it still runs.
   */
  async lease(paymentId: string, owner: string, leaseS: number): Promise<DebtRow | undefined> {
    const t = this.now()
    const taken = await this.db
      .updateTable('settlement_debts')
      .set({ lease_owner: owner, lease_until: t + leaseS, updated_at: t })
      .where('payment_id', '=', paymentId)
      .where('status', 'in', [...OPEN])
      // not re-entrant: a second look by the same replica waits for the first, as another replica's would
      .where('lease_until', '<', t)
      .executeTakeFirst()
    if (Number(taken.numUpdatedRows) !== 1) return undefined
    const row = await this.get(paymentId)
    return row?.lease_owner === owner ? row : undefined
  }

  /** Paid (`tx_hash`): closed. False when `owner` no longer held it (another replica took over). */
  settled(paymentId: string, owner: string, txHash: string, resolution: 'settled_on_retry' | 'confirmed_on_chain'): Promise<boolean> {
    return this.#leave(paymentId, owner, { status: 'settled', tx_hash: txHash, resolution, resolved_at: this.now(), last_error: null })
  }

  /** Can never be paid: `defaulted` (the payer's doing, keeps refusing them) or `forgiven`. */
  closed(paymentId: string, owner: string, status: 'defaulted' | 'forgiven', resolution: 'payer_default' | 'unsettleable', why: string): Promise<boolean> {
    return this.#leave(paymentId, owner, { status, resolution, resolved_at: this.now(), last_error: why.slice(0, 2000) })
  }

  /** Not decided yet: looked at again at `nextAt`; `status`/`txHash` say what is known now. */
  later(paymentId: string, owner: string, change: { status: 'owed' | 'pending'; txHash: string | null; error: string; payerFault: boolean; nextAt: number }): Promise<boolean> {
    return this.#leave(paymentId, owner, {
      status: change.status,
      tx_hash: change.txHash,
      last_error: change.error.slice(0, 2000),
      next_attempt_at: change.nextAt,
      ...(change.payerFault ? { payer_fault: 1 } : {}),
    })
  }

  /**
   * An operator forgives a debt (it stops refusing the payer): once — false when it was already closed. Not
   * while a replica holds its lease (it might be settling it right now).
   */
  async forgive(paymentId: string, resolution = 'forgiven_by_operator'): Promise<boolean> {
    const t = this.now()
    const done = await this.db
      .updateTable('settlement_debts')
      .set({ status: 'forgiven', resolution, resolved_at: t, updated_at: t, lease_owner: null, lease_until: 0 })
      .where('payment_id', '=', paymentId)
      .where('status', 'in', [...BLOCKING_STATUSES])
      .where('lease_until', '<', t)
      .executeTakeFirst()
    return Number(done.numUpdatedRows) === 1
  }

  async #leave(paymentId: string, owner: string, set: Partial<Omit<DebtRow, 'payment_id'>>): Promise<boolean> {
    const t = this.now()
    const done = await this.db
      .updateTable('settlement_debts')
      .set({ ...set, attempts: (eb) => eb('attempts', '+', 1), lease_owner: null, lease_until: 0, updated_at: t })
      .where('payment_id', '=', paymentId)
      .where('status', 'in', [...OPEN])
      .where('lease_owner', '=', owner)
      .executeTakeFirst()
    return Number(done.numUpdatedRows) === 1
  }
}
