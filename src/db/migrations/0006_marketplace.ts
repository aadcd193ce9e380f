import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Marketplace (gateway core, seed 000 §4.5): revisions of the agents' instructions (raised by
 * `POST /agents/{id}/evolve`) and the memory written by `POST /marketplace/modelserver/ingest` with
 * `remember: true` (prompt, answer and the embedding as a JSON array).
 */
export interface AgentRevisionsTable {
  agent: string
  revision: number
  instructions: string
  model: string
  created_at: number
  wallet: string | null
}

export interface MemoriesTable {
  memory_id: string
  wallet: string | null
  model: string
  prompt: string
  response: string
  embedding: string
  created_at: number
  /** Added by 0009: the agent a `/coreagent` memory was logged for. */
  agent?: string | null
}

export interface MarketplaceTables {
  agent_revisions: AgentRevisionsTable
  memories: MemoriesTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('agent_revisions')
      .addColumn('agent', 'varchar(64)', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('instructions', 'text', (c) => c.notNull())
      .addColumn('model', 'varchar(256)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('wallet', 'varchar(42)')
      .addPrimaryKeyConstraint('agent_revisions_pk', ['agent', 'revision'])
      .execute()
    await db.schema
      .createTable('memories')
      .addColumn('memory_id', 'varchar(32)', (c) => c.primaryKey())
      .addColumn('wallet', 'varchar(42)')
      .addColumn('model', 'varchar(256)', (c) => c.notNull())
      .addColumn('prompt', 'text', (c) => c.notNull())
      .addColumn('response', 'text', (c) => c.notNull())
      .addColumn('embedding', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('memories').execute()
    await db.schema.dropTable('agent_revisions').execute()
  },
}
