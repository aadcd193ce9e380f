import type { ColumnType, Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Tables of the paid-storage domain (seed 000 §2.7, §3.5).
 *
 * `storage_deposits`: one row per payment. The row is *claimed* (status `claimed`) before the facilitator or
 * the node is asked anything, keyed by (payer, nonce) — EIP-3009 nonce, or the Algorand transaction id — so a
 * replayed payload, even fifty at once, finds the key taken and never settles twice. `tx_hash` (the
 * settlement transaction) is unique. Amounts are integers in atomic units stored as decimal strings.
 *
 * `storage_uploads`: one per deposit. States `queued | uploading | stored | verified | verify_failed`.
 * While not yet stored, the paid bytes sit in `spool_path` (under the data dir), so a paid upload survives
 * an upstream outage and a restart; the background worker retries it against the same deposit.
 */
export interface StorageDepositsTable {
  deposit_id: string
  payer: string
  nonce: string
  pay_to: string
  network: string
  asset: string
  scheme: string
  /** What the payer actually paid (atomic units, decimal string). */
  amount_atomic: string
  /** The quoted price (atomic units, decimal string) and its `price_usd` text. */
  price_atomic: string
  price_usd: string
  tx_hash: string | null
  resource_url: string
  /** `claimed` (reserved, not settled) → `settled`; `settle_unknown` when the settle call's outcome is unknown. */
  status: string
  /** JSON of the decoded payment payload. */
  payment_payload: string
  /** JSON of the rail's settlement response. */
  settlement: string | null
  created_at: number
  updated_at: number
}

export interface StorageUploadsTable {
  upload_id: string
  deposit_id: string
  status: string
  ar_tx_id: string | null
  sha256: string
  mime_type: string
  size_bytes: number
  /** Upstream credit cost (winc, decimal string) when known. */
  winc: string | null
  app_name: string
  payer_tag: string
  spool_path: string | null
  attempts: number
  next_attempt_at: number
  last_error: string | null
  verify_attempts: number
  next_verify_at: number | null
  verified_at: number | null
  verify_error: string | null
  created_at: number
  updated_at: number
  // ── added by 0007_storage_attest ──
  /** When the upstream accepted the item; NULL for rows stored before 0007 (read `created_at` then). */
  stored_at: ColumnType<number | null, number | null | undefined, number | null>
  /** StorageAttest transaction of a verified upload (when the verifier attests). */
  attest_tx_hash: ColumnType<string | null, string | null | undefined, string | null>
  attest_attempts: ColumnType<number, number | undefined, number>
  next_attest_at: ColumnType<number | null, number | null | undefined, number | null>
  attest_error: ColumnType<string | null, string | null | undefined, string | null>
  // ── added by 0008_storage_attest_chain ──
  /** Chain id and StorageAttest contract of `attest_tx_hash`; NULL for rows attested before 0008. */
  attest_chain_id: ColumnType<number | null, number | null | undefined, number | null>
  attest_contract: ColumnType<string | null, string | null | undefined, string | null>
  // ── added by 0011_cluster ──
  /** The instance working on the upload now (set by the atomic claim); NULL while queued. */
  owner_instance: ColumnType<string | null, string | null | undefined, string | null>
}

export interface StorageTables {
  storage_deposits: StorageDepositsTable
  storage_uploads: StorageUploadsTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('storage_deposits')
      .addColumn('deposit_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('payer', 'varchar(128)', (c) => c.notNull())
      .addColumn('nonce', 'varchar(128)', (c) => c.notNull())
      .addColumn('pay_to', 'varchar(128)', (c) => c.notNull())
      .addColumn('network', 'varchar(128)', (c) => c.notNull())
      .addColumn('asset', 'varchar(128)', (c) => c.notNull())
      .addColumn('scheme', 'varchar(32)', (c) => c.notNull())
      .addColumn('amount_atomic', 'text', (c) => c.notNull())
      .addColumn('price_atomic', 'text', (c) => c.notNull())
      .addColumn('price_usd', 'text', (c) => c.notNull())
      .addColumn('tx_hash', 'varchar(128)', (c) => c.unique())
      .addColumn('resource_url', 'text', (c) => c.notNull())
      .addColumn('status', 'varchar(32)', (c) => c.notNull())
      .addColumn('payment_payload', 'text', (c) => c.notNull())
      .addColumn('settlement', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('storage_deposits_payer_nonce', ['payer', 'nonce'])
      .execute()
    await db.schema
      .createTable('storage_uploads')
      .addColumn('upload_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('deposit_id', 'varchar(64)', (c) => c.notNull().unique().references('storage_deposits.deposit_id'))
      .addColumn('status', 'varchar(32)', (c) => c.notNull())
      .addColumn('ar_tx_id', 'varchar(64)', (c) => c.unique())
      .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
      .addColumn('mime_type', 'varchar(255)', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('winc', 'text')
      .addColumn('app_name', 'text', (c) => c.notNull())
      .addColumn('payer_tag', 'text', (c) => c.notNull())
      .addColumn('spool_path', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('last_error', 'text')
      .addColumn('verify_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_verify_at', 'bigint')
      .addColumn('verified_at', 'bigint')
      .addColumn('verify_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('storage_uploads_status').on('storage_uploads').columns(['status', 'next_attempt_at']).execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('storage_uploads').ifExists().execute()
    await db.schema.dropTable('storage_deposits').ifExists().execute()
  },
}
