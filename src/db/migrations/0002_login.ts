import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Wallet login (seed 000 §2.1, §4.3, §5.1).
 * - `login_challenges`: one row per issued EIP-4361 message; single use — accepted by one conditional UPDATE
 *   (`… WHERE nonce = ? AND consumed_at IS NULL AND expires_at > now`).
 * - `sessions`: only the SHA-256 (hex) of a session token is stored, never the token.
 * - `wallets`: wallets that have logged in at least once (the permissions view's `registered`).
 * - `cost_usage`: calls of cost endpoints per wallet per UTC day (the quota).
 * Addresses are stored lower-case.
 */
export interface LoginChallengesTable {
  nonce: string
  wallet: string
  message: string
  issued_at: number
  expires_at: number
  consumed_at: number | null
}

export interface SessionsTable {
  token_hash: string
  wallet: string
  created_at: number
  expires_at: number
  revoked_at: number | null
}

export interface WalletsTable {
  wallet: string
  first_login_at: number
  last_login_at: number
}

export interface CostUsageTable {
  wallet: string
  /** UTC day, `YYYY-MM-DD`. */
  day: string
  calls: number
}

export interface LoginTables {
  login_challenges: LoginChallengesTable
  sessions: SessionsTable
  wallets: WalletsTable
  cost_usage: CostUsageTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('login_challenges')
      .addColumn('nonce', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('issued_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .execute()
    await db.schema.createIndex('login_challenges_expires_at').on('login_challenges').column('expires_at').execute()
    await db.schema
      .createTable('sessions')
      .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute()
    await db.schema.createIndex('sessions_wallet').on('sessions').column('wallet').execute()
    await db.schema
      .createTable('wallets')
      .addColumn('wallet', 'varchar(42)', (c) => c.primaryKey())
      .addColumn('first_login_at', 'bigint', (c) => c.notNull())
      .addColumn('last_login_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('cost_usage')
      .addColumn('wallet', 'varchar(42)', (c) => c.notNull())
      .addColumn('day', 'varchar(10)', (c) => c.notNull())
      .addColumn('calls', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('cost_usage_pk', ['wallet', 'day'])
      .execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const table of ['cost_usage', 'wallets', 'sessions', 'login_challenges']) await db.schema.dropTable(table).execute()
  },
}
