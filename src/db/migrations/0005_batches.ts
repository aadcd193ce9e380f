import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Tables of the receipt-batch domain (seed 000 §4.8).
 *
 * `receipt_batches`: one row per Merkle batch. A batch moves `built` (tree made, receipts reserved) →
 * `stored` (tree file uploaded; `tree_ar_tx_id`) → `committing` (commit transaction sent; `commit_tx_hash`)
 * → `committed` (`epoch` from the `RootCommitted` event). A run that stops half-way is resumed from the
 * recorded step by the next run, and a sent commit is looked up by its hash, never sent twice.
 * `tree_json` is the `StandardMerkleTree.dump()` text, so the tree file can be re-uploaded and any proof
 * recomputed.
 *
 * `batch_receipts`: one row per receipt (a stored, paid upload) — `ar_tx_id` is the primary key, so a
 * receipt is in at most one batch. It holds the leaf tuple exactly as hashed (`payer` 0x-address,
 * `ar_txid_hex` bytes32, `size_bytes`/`paid_atomics` decimal strings, `currency` code) and its proof
 * (JSON array of 0x-hex strings).
 */
export interface ReceiptBatchesTable {
  batch_id: string
  status: string
  /** Receipts settled before this instant (epoch seconds) were eligible. */
  cutoff_at: number
  root: string
  leaf_count: number
  tree_json: string
  tree_ar_tx_id: string | null
  chain_id: number | null
  contract_address: string | null
  commit_tx_hash: string | null
  epoch: number | null
  last_error: string | null
  created_at: number
  updated_at: number
  committed_at: number | null
  // ── added by 0020_batch_lease ──
  /** The run working on the batch, until `claimed_until` (epoch seconds; 0: free). */
  claimed_by: string | null
  claimed_until: number
  /** The chain's latest block just before the commit was sent: where a run taking over looks for it. */
  commit_from_block: number | null
}

export interface BatchReceiptsTable {
  ar_tx_id: string
  batch_id: string
  leaf_index: number
  upload_id: string
  deposit_id: string
  network: string
  asset: string
  payer: string
  ar_txid_hex: string
  size_bytes: string
  paid_atomics: string
  currency: number
  leaf_hash: string
  proof: string
  /** Content SHA-256 (hex) and the upload's time (epoch seconds), for the receipt view. */
  sha256: string
  stored_at: number
  created_at: number
}

export interface BatchTables {
  receipt_batches: ReceiptBatchesTable
  batch_receipts: BatchReceiptsTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('receipt_batches')
      .addColumn('batch_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('status', 'varchar(16)', (c) => c.notNull())
      .addColumn('cutoff_at', 'bigint', (c) => c.notNull())
      .addColumn('root', 'varchar(66)', (c) => c.notNull())
      .addColumn('leaf_count', 'integer', (c) => c.notNull())
      .addColumn('tree_json', 'text', (c) => c.notNull())
      .addColumn('tree_ar_tx_id', 'varchar(64)')
      .addColumn('chain_id', 'bigint')
      .addColumn('contract_address', 'varchar(42)')
      .addColumn('commit_tx_hash', 'varchar(66)')
      .addColumn('epoch', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('committed_at', 'bigint')
      .addUniqueConstraint('receipt_batches_chain_contract_epoch', ['chain_id', 'contract_address', 'epoch'])
      .execute()
    await db.schema.createIndex('receipt_batches_status').on('receipt_batches').column('status').execute()
    await db.schema
      .createTable('batch_receipts')
      .addColumn('ar_tx_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('batch_id', 'varchar(64)', (c) => c.notNull().references('receipt_batches.batch_id'))
      .addColumn('leaf_index', 'integer', (c) => c.notNull())
      .addColumn('upload_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('deposit_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('network', 'varchar(128)', (c) => c.notNull())
      .addColumn('asset', 'varchar(128)', (c) => c.notNull())
      .addColumn('payer', 'varchar(42)', (c) => c.notNull())
      .addColumn('ar_txid_hex', 'varchar(66)', (c) => c.notNull())
      .addColumn('size_bytes', 'text', (c) => c.notNull())
      .addColumn('paid_atomics', 'text', (c) => c.notNull())
      .addColumn('currency', 'integer', (c) => c.notNull())
      .addColumn('leaf_hash', 'varchar(66)', (c) => c.notNull())
      .addColumn('proof', 'text', (c) => c.notNull())
      .addColumn('sha256', 'varchar(64)', (c) => c.notNull())
      .addColumn('stored_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('batch_receipts_batch').on('batch_receipts').columns(['batch_id', 'leaf_index']).execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('batch_receipts').ifExists().execute()
    await db.schema.dropTable('receipt_batches').ifExists().execute()
  },
}
