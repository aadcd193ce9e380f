import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Settlements that failed after the call was served: a debt of the payer (`settlement_debts`, one row per paid
 * call, keyed by its `cost_payments.payment_id`). The row keeps what is needed to finish the settlement later —
 * the exact facilitator request (`settle_request`, JSON), the amount served (`amount_atomic`, never above the
 * authorised `cap_atomic`), the payment's nonce and deadline — and its state:
 *
 * - `owed`: nothing was paid yet; retried (`next_attempt_at`, `attempts`) while the payment can still settle;
 * - `pending`: a settlement may be on its way (a broadcast transaction `tx_hash`, or a settle call whose outcome
 *   is unknown): resolved by reading the chain, never by settling a second time;
 * - `settled`: paid (`tx_hash`), by a retry or found on chain (`resolution` says which);
 * - `defaulted`: can never be paid and the payer caused it (funds or allowance gone, nonce cancelled);
 * - `forgiven`: can never be paid through no fault of the payer (the facilitator stayed unreachable until the
 *   deadline), or an operator forgave it.
 *
 * `owed`, `pending` and `defaulted` refuse the payer (and the session wallet) further paid calls. Replicas on one
 * database work a debt one at a time: a replica leases it (`lease_owner`, `lease_until`) by one conditional
 * update, and every change of state is conditional on the state it leaves, so two replicas never both settle
 * or both forgive one debt.
 */
export interface SettlementDebtsTable {
  payment_id: string
  payer: string
  wallet: string
  route: string
  network: string
  scheme: string
  asset: string
  pay_to: string
  /** What was served (atomic units, decimal string): the amount the settlement transfers. */
  amount_atomic: string
  /** What the payer authorised (atomic units, decimal string); `amount_atomic` ≤ it. */
  cap_atomic: string
  /** Permit2 nonce (decimal) or EIP-3009 nonce (0x hex). */
  nonce: string
  /** The payment's deadline (epoch seconds): no settlement can land after it. */
  valid_until: number
  settle_request: string
  status: string
  resolution: string | null
  /** 1 once a settlement failed for a reason on the payer's side (balance, allowance, cancelled nonce). */
  payer_fault: number
  tx_hash: string | null
  attempts: number
  next_attempt_at: number
  lease_owner: string | null
  lease_until: number
  last_error: string | null
  created_at: number
  updated_at: number
  resolved_at: number | null
}

export interface SettlementDebtTables {
  settlement_debts: SettlementDebtsTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('settlement_debts')
      .addColumn('payment_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('payer', 'varchar(128)', (c) => c.notNull())
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('route', 'varchar(64)', (c) => c.notNull())
      .addColumn('network', 'varchar(128)', (c) => c.notNull())
      .addColumn('scheme', 'varchar(16)', (c) => c.notNull())
      .addColumn('asset', 'varchar(128)', (c) => c.notNull())
      .addColumn('pay_to', 'varchar(128)', (c) => c.notNull())
      .addColumn('amount_atomic', 'text', (c) => c.notNull())
      .addColumn('cap_atomic', 'text', (c) => c.notNull())
      .addColumn('nonce', 'varchar(128)', (c) => c.notNull())
      .addColumn('valid_until', 'bigint', (c) => c.notNull())
      .addColumn('settle_request', 'text', (c) => c.notNull())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('resolution', 'varchar(32)')
      .addColumn('payer_fault', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('tx_hash', 'varchar(128)')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_owner', 'varchar(128)')
      .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('resolved_at', 'bigint')
      .execute()
    // the two reads of every paid call (is this payer or wallet in debt?) and the reconciler's (what is due?)
    await db.schema.createIndex('settlement_debts_payer').on('settlement_debts').columns(['payer', 'status']).execute()
    await db.schema.createIndex('settlement_debts_wallet').on('settlement_debts').columns(['wallet', 'status']).execute()
    await db.schema.createIndex('settlement_debts_due').on('settlement_debts').columns(['status', 'next_attempt_at']).execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('settlement_debts').ifExists().execute()
  },
}
