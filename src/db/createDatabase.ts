import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely'
import pg from 'pg'
import type { Database } from './Database.js'
import { cachingSqliteDatabase } from './cachingSqliteDatabase.js'
import { migrateToLatest } from './migrateToLatest.js'
import { namedStatementPool } from './namedStatementPool.js'

export type DatabaseDialect = 'sqlite' | 'postgres'

export type CreateDatabaseParameters = {
  /** `postgres://…` selects PostgreSQL; `sqlite:<path>`, a bare path or `:memory:` selects SQLite. */
  url: string
  /** Apply migrations before returning (default true). */
  migrate?: boolean
}

export type DatabaseHandle = {
  db: Kysely<Database>
  dialect: DatabaseDialect
  close: () => Promise<void>
}

// int8 columns (epoch seconds/ms, counters) come back from pg as strings by default; every such value
// we store fits in 2^53, so parse it as a number. Money is never stored in int8 (see Database.ts).
pg.types.setTypeParser(20, (value) => Number(value))

export async function createDatabase({ url, migrate = true }: CreateDatabaseParameters): Promise<DatabaseHandle> {
  const handle = url.startsWith('postgres://') || url.startsWith('postgresql://') ? openPostgres(url) : openSqlite(url)
  if (migrate) {
    const schema =
      handle.dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]?.schema : undefined
    await migrateToLatest(handle.db, { schema })
  }
  return handle
}

function openPostgres(url: string): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: namedStatementPool(pool) }) })
  return { db, dialect: 'postgres', close: () => db.destroy() }
}

function openSqlite(url: string): DatabaseHandle {
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const sqlite = new SQLite(path)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingSqliteDatabase(sqlite) }) })
  return { db, dialect: 'sqlite', close: () => db.destroy() }
}
