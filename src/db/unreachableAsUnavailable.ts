import type { PostgresPool } from 'kysely'
import { DatabaseUnavailableError, isDatabaseUnavailable } from './DatabaseUnavailableError.js'

/** A PostgreSQL SQLSTATE: five digits or capitals (a network error's code is `ECONNREFUSED` and the like). */
const SQLSTATE = /^[0-9A-Z]{5}$/

/**
 * `pool` whose failure to hand out a connection is a `DatabaseUnavailableError` (answered 503 with `Retry-After`):
 * the server down, restarting or unreachable (refused, reset, timed out, no route, a name that does not resolve)
 * or no connection free in time. Those errors carry a network code or none, which `isDatabaseUnavailable` cannot
 * tell from another upstream's; here they can only be the database's. What the server itself refused with a
 * SQLSTATE outside the unavailable classes (a wrong password, a database that does not exist) is a setting to fix,
 * thrown as it is (a 500).
 */
export function unreachableAsUnavailable(pool: PostgresPool): PostgresPool {
  return {
    ...pool,
    connect: async () => {
      try {
        return await pool.connect()
      } catch (error) {
        const code = (error as { code?: unknown }).code
        if (typeof code === 'string' && SQLSTATE.test(code) && !isDatabaseUnavailable(error)) throw error
        throw new DatabaseUnavailableError(error)
      }
    },
  }
}
