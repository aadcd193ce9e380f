import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * x402 `sign-in-with-x` (CAIP-122): the nonce of every proof the gateway accepted, taken with one unique insert
 * before the request is served as the wallet, so a proof is good once on every instance of one database (a
 * replayed header is refused). A row outlives the proof's validity window (`expires_at`) and is pruned after.
 */
export interface SiwxNoncesTable {
  nonce: string
  wallet: string
  expires_at: number
}

export interface SiwxNonceTables {
  siwx_nonces: SiwxNoncesTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('siwx_nonces')
      .addColumn('nonce', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('siwx_nonces_expires_at').on('siwx_nonces').columns(['expires_at']).execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('siwx_nonces').ifExists().execute()
  },
}
