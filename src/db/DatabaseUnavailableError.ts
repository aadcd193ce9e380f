import { defineError } from '../shared/errors/defineError.js'

/** How long a client waits before asking again (`Retry-After`, seconds): a lock released, a restart, a failover. */
const RETRY_AFTER_S = 5

/**
 * The parts of a refusal while the database is away (a `defineError` body): `message`, the store's error as
 * `cause` (logged, never answered) and when to come back (`details.retry_after_s`, also `Retry-After`).
 */
export const retryShortly = (message: string, cause: unknown) => ({ message, cause, meta: { retry_after_s: RETRY_AFTER_S } })

/**
 * The database could not serve a request but may again soon (`isDatabaseUnavailable`): 503 `database_unavailable`
 * with `Retry-After`, so a client retries instead of reporting a bug. `cause` is the driver's error (logged, never
 * answered).
 */
export const DatabaseUnavailableError = defineError('DatabaseUnavailableError', 'database_unavailable', (cause: unknown) =>
  retryShortly('The database is unavailable right now; retry shortly.', cause),
)
export type DatabaseUnavailableError = InstanceType<typeof DatabaseUnavailableError>

/**
 * SQLite result codes (better-sqlite3's `code`, extended codes included) of a database that cannot serve now but
 * may again: busy or locked past the busy timeout, an I/O error, a full disk, a file it cannot open or may not
 * write.
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(?:BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)/
/**
 * PostgreSQL SQLSTATEs of the same: class 08 (connection exception), class 53 (insufficient resources: disk full,
 * out of memory, too many connections) and 57P01–57P03 (the server shutting down, crashed, not accepting yet).
 */
const POSTGRES_UNAVAILABLE = /^(?:08|53)[0-9A-Z]{3}$|^57P0[123]$/
/** What node-postgres and its pool say when the server went away or no connection came in time (no code). */
const POSTGRES_CONNECTION_LOST = /^Connection terminated|^timeout exceeded when trying to connect/

/**
 * Whether `error` (or one of its causes) is the database being unavailable — as opposed to a query the database
 * refused (a constraint, a missing table: a bug, answered 500). Network errors without a driver's code are not
 * counted: other upstreams fail with the same codes (the PostgreSQL pool makes its own `DatabaseUnavailableError`
 * of them: `unreachableAsUnavailable`).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current instanceof DatabaseUnavailableError) return true
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && (SQLITE_UNAVAILABLE.test(code) || POSTGRES_UNAVAILABLE.test(code))) return true
    if (POSTGRES_CONNECTION_LOST.test(current.message)) return true
    current = current.cause
  }
  return false
}

/** `error` as the database being unavailable (itself, when it already is one), or undefined when it is not that. */
export function asDatabaseUnavailable(error: unknown): DatabaseUnavailableError | undefined {
  if (error instanceof DatabaseUnavailableError) return error
  return isDatabaseUnavailable(error) ? new DatabaseUnavailableError(error) : undefined
}
