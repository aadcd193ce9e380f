/**
 * "Something changed in the database" notifications for caches of database rows.
 * - `row`: one row of `table`, identified by its key column (see `watchedTables`), was updated, deleted or
 *   (where watched) inserted;
 * - `all`: anything may have changed (another process wrote, the notification channel was lost or regained):
 *   drop everything.
 * A listener is called synchronously and must not throw or touch the database.
 */
export type Change = { kind: 'row'; table: string; key: string } | { kind: 'all'; reason: string }

export type ChangeListener = (change: Change) => void

export interface ChangeFeed {
  /**
   * True when every committed change is being reported, so a cache may answer from memory. Call it right
   * before trusting a cached value: it may itself report a change first (SQLite checks `data_version`).
   * False during start-up, after a lost connection and until it is listening again: callers go to the database.
   */
  live(): boolean
  /** Registers a listener; returns its removal. */
  subscribe(listener: ChangeListener): () => void
  /**
   * Resolves `true` once every instance following this database has been told of every change committed
   * before the call (so a revocation through this instance is refused by all of them from then on), `false`
   * when that could not be confirmed within `timeoutMs` (an instance is unreachable; it drops its cache when
   * it notices). SQLite: at once (the triggers and `data_version` leave nothing in flight).
   */
  barrier(timeoutMs: number): Promise<boolean>
  /** Resolves once the first attempt to start listening is over (successful or not). */
  ready(): Promise<void>
  /** Stops listening (the feed is no longer live). */
  close(): Promise<void>
}
