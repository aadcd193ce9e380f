import type { ColumnType, Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Paid cost calls and the usage ledger.
 *
 * `cost_payments`: one row per x402 payment offered for a cost call past the quota. The row is *claimed*
 * (status `claimed`) before the facilitator hears of the payment, keyed by (payer, nonce) — the EIP-3009
 * nonce — so concurrent retries with one payload, on any number of gateway instances sharing the database,
 * find the key taken: exactly one runs the call. A call that fails before producing output deletes its
 * claim (the payer may retry with the same payload); a settled payment keeps it forever (`settled`), and
 * one whose settle call had an unknown outcome keeps it too (`settle_unknown`). `tx_hash` is unique.
 *
 * `llm_usage`: one row per cost call — who, which operation, which model, tokens, durations, outcome, and
 * how it was paid (`quota`, `payment` with its `payment_id`, or `overlord`: no quota). `day` is the UTC day
 * (`YYYY-MM-DD`) the call started, for the per-day view of `GET /llm/usage`.
 */
export interface CostPaymentsTable {
  payment_id: string
  payer: string
  nonce: string
  /** The session wallet the call was made for (may differ from the payer). */
  wallet: string
  route: string
  network: string
  asset: string
  pay_to: string
  /** What the payer authorised and the price asked (atomic units, decimal strings). */
  amount_atomic: string
  price_atomic: string
  status: string
  tx_hash: string | null
  payment_payload: string
  settlement: string | null
  created_at: number
  updated_at: number
  /**
   * Migration 0021: a running `upto` call's checkpoint; also a `batch-settlement` call's (`checkpoint_request`: the
   * voucher, `BatchCheckpoint`; no `valid_until`). Null on every other row.
   */
  owner: Nullable<string>
  heartbeat_at: Nullable<number>
  checkpoint_tokens: Nullable<number>
  checkpoint_amount: Nullable<string>
  checkpoint_request: Nullable<string>
  valid_until: Nullable<number>
}

/** A column added later: optional on insert, null on older rows. */
type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>

export interface LlmUsageTable {
  usage_id: string
  wallet: string
  route: string
  model: string
  prompt_tokens: number
  completion_tokens: number
  duration_ms: number
  /** Time to the first streamed chunk; null for whole (non-streamed) answers. */
  ttft_ms: ColumnType<number | null, number | null | undefined, number | null>
  streamed: number
  /** `ok` | `error` | `cancelled` (the client went away mid-stream). */
  outcome: string
  /** HTTP status answered (200 for a stream that started). */
  status: number
  /** `quota` | `payment` | `overlord`. */
  paid_by: string
  payment_id: ColumnType<string | null, string | null | undefined, string | null>
  /** Atomic units settled for this call (decimal string); null when not paid. */
  amount_atomic: ColumnType<string | null, string | null | undefined, string | null>
  day: string
  created_at: number
}

export interface CostLedgerTables {
  cost_payments: CostPaymentsTable
  llm_usage: LlmUsageTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('cost_payments')
      .addColumn('payment_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('payer', 'varchar(128)', (c) => c.notNull())
      .addColumn('nonce', 'varchar(128)', (c) => c.notNull())
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('route', 'varchar(64)', (c) => c.notNull())
      .addColumn('network', 'varchar(128)', (c) => c.notNull())
      .addColumn('asset', 'varchar(128)', (c) => c.notNull())
      .addColumn('pay_to', 'varchar(128)', (c) => c.notNull())
      .addColumn('amount_atomic', 'text', (c) => c.notNull())
      .addColumn('price_atomic', 'text', (c) => c.notNull())
      .addColumn('status', 'varchar(32)', (c) => c.notNull())
      .addColumn('tx_hash', 'varchar(128)', (c) => c.unique())
      .addColumn('payment_payload', 'text', (c) => c.notNull())
      .addColumn('settlement', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('cost_payments_payer_nonce', ['payer', 'nonce'])
      .execute()
    await db.schema
      .createTable('llm_usage')
      .addColumn('usage_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('route', 'varchar(64)', (c) => c.notNull())
      .addColumn('model', 'varchar(256)', (c) => c.notNull())
      .addColumn('prompt_tokens', 'integer', (c) => c.notNull())
      .addColumn('completion_tokens', 'integer', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('ttft_ms', 'integer')
      .addColumn('streamed', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
      .addColumn('status', 'integer', (c) => c.notNull())
      .addColumn('paid_by', 'varchar(16)', (c) => c.notNull())
      .addColumn('payment_id', 'varchar(64)')
      .addColumn('amount_atomic', 'text')
      .addColumn('day', 'varchar(10)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('llm_usage_wallet_day').on('llm_usage').columns(['wallet', 'day']).execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('llm_usage').ifExists().execute()
    await db.schema.dropTable('cost_payments').ifExists().execute()
  },
}
