import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Per-wallet `/llm` API keys (seed 000 §4.5 "/llm (keys …)"): stored only as the SHA-256 of the
 * key, with a short visible prefix to tell keys apart; revoked keys keep their row. Memories gain the agent
 * they were logged for (`/coreagent`).
 */
export interface LlmKeysTable {
  key_id: string
  wallet: string
  key_hash: string
  prefix: string
  name: string
  created_at: number
  last_used_at: number | null
  revoked_at: number | null
}

export interface LlmKeyTables {
  llm_keys: LlmKeysTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('llm_keys')
      .addColumn('key_id', 'varchar(32)', (c) => c.primaryKey())
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
      .addColumn('prefix', 'varchar(32)', (c) => c.notNull())
      .addColumn('name', 'varchar(128)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute()
    await db.schema.createIndex('llm_keys_wallet').on('llm_keys').column('wallet').execute()
    await db.schema.alterTable('memories').addColumn('agent', 'varchar(64)').execute()
    await db.schema.createIndex('memories_wallet').on('memories').columns(['wallet', 'created_at']).execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex('memories_wallet').execute()
    await db.schema.alterTable('memories').dropColumn('agent').execute()
    await db.schema.dropTable('llm_keys').execute()
  },
}
