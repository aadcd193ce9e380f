import type SQLite from 'better-sqlite3'
import type { SqliteDatabase } from 'kysely'

export type CachingSqliteDatabaseParameters = {
  /** Distinct SQL texts kept prepared (least recently used beyond it are finalised by GC). Default 500. */
  max?: number
}

/**
 * A better-sqlite3 database for kysely's `SqliteDialect` that keeps prepared statements. Kysely calls
 * `prepare(sql)` for every query; preparing is SQLite parsing and planning the statement, a large share of a
 * simple indexed lookup. Our queries are a small fixed set of SQL texts (values are always bound
 * parameters), so each is prepared once and reused.
 *
 * Reuse is safe because kysely's SQLite driver runs one query at a time on its single connection (a mutex held
 * for the whole query, streaming included), so a cached statement is never re-entered while it is iterating;
 * and SQLite re-prepares a statement by itself when the schema changes under it (migrations).
 */
export function cachingSqliteDatabase(database: SQLite.Database, { max = 500 }: CachingSqliteDatabaseParameters = {}): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>()
  return {
    close: () => void database.close(),
    prepare: (sql: string) => {
      let statement = statements.get(sql)
      if (statement) {
        // Most recently used last, so the least recently used is the first key when the cache is full.
        statements.delete(sql)
        statements.set(sql, statement)
        return statement
      }
      statement = database.prepare(sql)
      statements.set(sql, statement)
      if (statements.size > max) statements.delete(statements.keys().next().value!)
      return statement
    },
  }
}
