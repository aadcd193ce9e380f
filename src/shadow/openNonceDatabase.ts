import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import type { DatabaseHandle } from '../db/createDatabase.js'
import { createShadowNoncesTable, type ShadowTables } from '../db/migrations/0003_shadow.js'

export type NonceDatabase = { db: Kysely<ShadowTables>; location: string; close: () => Promise<void> }

/**
 * Where the nonce store lives (decision documented in docs/security.md):
 * - main database is PostgreSQL → its `shadow_nonces` table, shared by every gateway process (required for
 *   the exactly-once guarantee across processes); `SHADOW_NONCES_PATH` is ignored;
 * - main database is SQLite → a separate SQLite file at `SHADOW_NONCES_PATH` (WAL, busy timeout), so the
 *   high-churn nonce table never contends with the main database and can be wiped independently.
 * Closing only closes what this function opened.
 */
export async function openNonceDatabase(main: Pick<DatabaseHandle, 'db' | 'dialect'>, noncesPath: string): Promise<NonceDatabase> {
  if (main.dialect === 'postgres') {
    return { db: main.db as unknown as Kysely<ShadowTables>, location: 'postgres:shadow_nonces', close: async () => {} }
  }
  if (noncesPath !== ':memory:') mkdirSync(dirname(noncesPath), { recursive: true })
  const sqlite = new SQLite(noncesPath)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('busy_timeout = 5000')
  const db = new Kysely<ShadowTables>({ dialect: new SqliteDialect({ database: sqlite }) })
  await createShadowNoncesTable(db)
  return { db, location: `sqlite:${noncesPath}`, close: () => db.destroy() }
}
