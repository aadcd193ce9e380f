import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * x402 `batch-settlement`: the server side of the payers' channels, kept durably and shared by every gateway
 * instance of one database.
 *
 * `batch_channels`: one row per channel (its id is the EIP-712 hash of the channel's terms on one chain). `state`
 * is the channel record of @x402/evm's server scheme as JSON — the terms, the running total charged, the latest
 * voucher the payer signed (its ceiling and signature: what a claim submits), the on-chain balance and claimed
 * total last seen, and the request in flight. Every change is a conditional update on `version` (compare and
 * set), so two instances never both commit a change made from the same state: one of them reads again.
 * `charged_atomic` / `claimed_atomic` mirror the state for the claim schedule's query (decimal strings).
 *
 * `batch_settlement_txs`: every transaction the server had the facilitator send for it — `claim` (one per batch
 * of vouchers, however many channels), `settle` (the sweep to the receiver) and `refund` — with what it moved.
 *
 * `batch_settlement_leases`: the one instance that runs a claim or refund job at a time (a lease that expires,
 * so a stopped instance does not hold it for ever).
 */
export interface BatchChannelsTable {
  channel_id: string
  network: string
  payer: string
  receiver: string
  token: string
  state: string
  charged_atomic: string
  claimed_atomic: string
  version: number
  last_request_at: number
  updated_at: number
}

export interface BatchSettlementTxsTable {
  tx_id: string
  kind: string
  network: string
  tx_hash: string
  /** Vouchers in a claim (0 for a settle or a refund). */
  vouchers: number
  /** What moved (a settle's sweep, a refund's return; '' for a claim, which moves nothing). */
  amount_atomic: string
  channel_id: string | null
  created_at: number
}

export interface BatchSettlementLeasesTable {
  name: string
  holder: string
  expires_at: number
}

export interface BatchSettlementTables {
  batch_channels: BatchChannelsTable
  batch_settlement_txs: BatchSettlementTxsTable
  batch_settlement_leases: BatchSettlementLeasesTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('batch_channels')
      .addColumn('channel_id', 'varchar(66)', (c) => c.primaryKey())
      .addColumn('network', 'varchar(128)', (c) => c.notNull())
      .addColumn('payer', 'varchar(42)', (c) => c.notNull())
      .addColumn('receiver', 'varchar(42)', (c) => c.notNull())
      .addColumn('token', 'varchar(42)', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('charged_atomic', 'text', (c) => c.notNull())
      .addColumn('claimed_atomic', 'text', (c) => c.notNull())
      .addColumn('version', 'bigint', (c) => c.notNull())
      .addColumn('last_request_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('batch_channels_payer').on('batch_channels').columns(['payer']).execute()
    await db.schema
      .createTable('batch_settlement_txs')
      .addColumn('tx_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('kind', 'varchar(16)', (c) => c.notNull())
      .addColumn('network', 'varchar(128)', (c) => c.notNull())
      .addColumn('tx_hash', 'varchar(66)', (c) => c.notNull())
      .addColumn('vouchers', 'integer', (c) => c.notNull())
      .addColumn('amount_atomic', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'varchar(66)')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('batch_settlement_leases')
      .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('holder', 'varchar(128)', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('batch_settlement_leases').ifExists().execute()
    await db.schema.dropTable('batch_settlement_txs').ifExists().execute()
    await db.schema.dropTable('batch_channels').ifExists().execute()
  },
}
