import type SQLite from 'better-sqlite3'
import type { ChangeFeed } from './ChangeFeed.js'
import { ChangeListeners } from './ChangeListeners.js'
import { watchedTables } from './watchedTables.js'

/** SQL function the TEMP triggers call; registered on this connection only. */
const FUNCTION = 'gateway_cache_changed'

/**
 * Changes of a SQLite database, for caches of one connection (the gateway's own). SQLite has no NOTIFY, so:
 * - writes through this connection (every gateway write, and a test's direct kysely write) fire TEMP triggers
 *   that call a function registered with better-sqlite3: the listener runs synchronously inside the writing
 *   statement, before the write's promise resolves. TEMP triggers and the function exist only on this
 *   connection, so other processes (a CLI, a second gateway on the same file) never meet a function they
 *   do not have;
 * - writes by any other connection move `PRAGMA data_version` (SQLite changes it exactly when another
 *   connection committed). `live()` reads it (about a microsecond, a prepared statement) and reports `all`
 *   when it moved, so a cache never answers after another connection's commit without dropping everything.
 * The triggers are created on the first `subscribe` (the tables exist by then: migrations ran).
 */
export function sqliteChangeFeed(database: SQLite.Database): ChangeFeed {
  const listeners = new ChangeListeners()
  let installed = false
  let dataVersion: (() => unknown) | undefined
  let seen: unknown

  const install = () => {
    database.function(FUNCTION, { deterministic: false, varargs: false }, (table: unknown, key: unknown) => {
      listeners.emit({ kind: 'row', table: String(table), key: String(key) })
      return null
    })
    for (const { table, key, operations } of watchedTables) {
      for (const operation of operations) {
        const row = operation === 'INSERT' ? 'NEW' : 'OLD'
        const name = `${FUNCTION}_${table}_${operation.toLowerCase()}`
        database.exec(`DROP TRIGGER IF EXISTS temp."${name}"`)
        database.exec(`CREATE TEMP TRIGGER "${name}" AFTER ${operation} ON main."${table}" BEGIN SELECT ${FUNCTION}('${table}', ${row}."${key}"); END`)
      }
    }
    const statement = database.prepare('PRAGMA data_version').pluck()
    dataVersion = () => statement.get()
    seen = dataVersion()
    installed = true
  }

  return {
    live() {
      if (!installed || !database.open) return false
      let version: unknown
      try {
        version = dataVersion!()
      } catch {
        return false // the connection is busy (an open iterator) or closed: go to the database
      }
      if (version !== seen) {
        seen = version
        listeners.emit({ kind: 'all', reason: 'another connection committed' })
      }
      return true
    },
    subscribe(listener) {
      if (!installed) {
        try {
          install()
        } catch {
          installed = false // no such table (not migrated): never live, so caches are bypassed
        }
      }
      return listeners.add(listener)
    },
    ready: async () => undefined,
    barrier: async () => true,
    close: async () => {
      installed = false
    },
  }
}
