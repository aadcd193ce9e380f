import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely'
import pg from 'pg'
import type { ChangeFeed } from '../cache/ChangeFeed.js'
import { postgresChangeFeed } from '../cache/postgresChangeFeed.js'
import { sqliteChangeFeed } from '../cache/sqliteChangeFeed.js'
import type { Database } from './Database.js'
import { cachingSqliteDatabase } from './cachingSqliteDatabase.js'
import { type BackgroundCommit, createBackgroundCommit } from './createBackgroundCommit.js'
import { migrateToLatest } from './migrateToLatest.js'
import { namedStatementPool } from './namedStatementPool.js'
import { unreachableAsUnavailable } from './unreachableAsUnavailable.js'

export type DatabaseDialect = 'sqlite' | 'postgres'

export type CreateDatabaseParameters = {
  /** `postgres://…` selects PostgreSQL; `sqlite:<path>`, a bare path or `:memory:` selects SQLite. */
  url: string
  /** Apply migrations before returning (default true). */
  migrate?: boolean
  /**
   * SQLite only: `full` (default) syncs the WAL to disk at every commit; `normal` syncs at checkpoints — a
   * commit survives a crash of the process but may be lost with the machine (power loss, kernel crash). Each
   * commit is on the event loop (better-sqlite3 is synchronous): `full` costs one fsync per write (measured
   * 3.3 ms median on a loaded shared disk, 0.01 ms with `normal`), e.g. the quota UPDATE of every cost call.
   */
  sqliteSynchronous?: 'full' | 'normal'
  /**
   * PostgreSQL only: told when an idle connection of the pool dies (the server restarted, failed over or ended it).
   * The pool drops it and opens another on demand; without a listener node-postgres's pool would throw the error
   * as an unhandled `error` event and end the process.
   */
  onConnectionLost?: (error: Error) => void
}

export type DatabaseHandle = {
  db: Kysely<Database>
  dialect: DatabaseDialect
  close: () => Promise<void>
  /**
   * Changes of the cached tables, by any writer (`src/cache/`); started by its first subscriber, stopped by
   * `close`. A handle without one (built by hand) gets no caching.
   */
  changeFeed?: ChangeFeed | undefined
  /**
   * For writes nobody waits for before answering (the usage record of an answered call): the commit does not
   * hold the event loop while the disk syncs (`createBackgroundCommit`). A handle without one runs them as usual.
   */
  backgroundCommit?: BackgroundCommit | undefined
  /**
   * As `backgroundCommit`, the sync shared with the next commit's (or started shortly after): for the usage record
   * of an answered call, whose own sync would cost more CPU than its statement (`createBackgroundCommit`).
   */
  groupCommit?: BackgroundCommit | undefined
}

// int8 columns (epoch seconds/ms, counters) come back from pg as strings by default; every such value
// we store fits in 2^53, so parse it as a number. Money is never stored in int8 (see Database.ts).
pg.types.setTypeParser(20, (value) => Number(value))

export async function createDatabase({ url, migrate = true, sqliteSynchronous = 'full', onConnectionLost }: CreateDatabaseParameters): Promise<DatabaseHandle> {
  const handle = url.startsWith('postgres://') || url.startsWith('postgresql://') ? openPostgres(url, onConnectionLost) : openSqlite(url, sqliteSynchronous)
  if (migrate) {
    const schema =
      handle.dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(handle.db)).rows[0]?.schema : undefined
    await migrateToLatest(handle.db, { schema })
  }
  return handle
}

function openPostgres(url: string, onConnectionLost: ((error: Error) => void) | undefined): DatabaseHandle {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  pool.on('error', (error) => onConnectionLost?.(error))
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: unreachableAsUnavailable(namedStatementPool(pool)) }) })
  return handleOf(db, 'postgres', postgresChangeFeed({ url }))
}

function openSqlite(url: string, synchronous: 'full' | 'normal'): DatabaseHandle {
  const path = url.startsWith('sqlite:') ? url.slice('sqlite:'.length) : url
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const sqlite = new SQLite(path)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma(`synchronous = ${synchronous === 'normal' ? 'NORMAL' : 'FULL'}`)
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: cachingSqliteDatabase(sqlite) }) })
  return handleOf(db, 'sqlite', sqliteChangeFeed(sqlite), createBackgroundCommit({ db, sqlite, path, synchronous }))
}

/** The handle of an open database and its change feed: closing stops the feed, then the connections. */
function handleOf(db: Kysely<Database>, dialect: DatabaseDialect, changeFeed: ChangeFeed, background?: ReturnType<typeof createBackgroundCommit>): DatabaseHandle {
  return {
    db,
    dialect,
    changeFeed,
    backgroundCommit: background?.commit,
    groupCommit: background?.groupCommit,
    close: async () => {
      await changeFeed.close()
      await background?.close()
      await db.destroy()
    },
  }
}
