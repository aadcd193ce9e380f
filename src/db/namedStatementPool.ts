import { createHash } from 'node:crypto'
import type { PostgresPool, PostgresPoolClient } from 'kysely'

export type NamedStatementPoolParameters = {
  /** Distinct SQL texts given a name (beyond it, queries run unnamed as before). Default 500. */
  max?: number
}

type QueryFn = PostgresPoolClient['query']
const wrapped = Symbol('namedStatements')

/** Parameterised DML that PostgreSQL may keep as a prepared statement (never DDL, never multi-statement text). */
const DML = /^\s*(select|insert|update|delete|with)\b/i

/**
 * A pg pool for kysely's `PostgresDialect` whose parameterised queries run as named prepared statements: the
 * first use on a connection parses and plans the statement, later uses only bind and execute it (pg keeps the
 * names per connection). Names are derived from the SQL text (`k` + SHA-1 prefix), so equal text always gets
 * the same name on every connection. Queries without parameters keep pg's simple protocol (DDL, migrations).
 *
 * If the server refuses a cached plan (a table changed shape after the statement was prepared: `0A000`), the
 * query is retried unnamed and that name is not used on that connection again.
 */
export function namedStatementPool(pool: PostgresPool, { max = 500 }: NamedStatementPoolParameters = {}): PostgresPool {
  const names = new Map<string, string>()
  const nameOf = (text: string): string | undefined => {
    let name = names.get(text)
    if (name === undefined) {
      if (names.size >= max || !DML.test(text)) return undefined
      name = `k${createHash('sha1').update(text).digest('hex').slice(0, 20)}`
      names.set(text, name)
    }
    return name
  }
  const wrap = (client: PostgresPoolClient & { [wrapped]?: true }): PostgresPoolClient => {
    if (client[wrapped]) return client
    const query = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<unknown>
    const refused = new Set<string>()
    client.query = (async (text: unknown, values?: ReadonlyArray<unknown>) => {
      const name = typeof text === 'string' && values && values.length > 0 ? nameOf(text) : undefined
      if (!name || refused.has(name)) return query(text, values)
      try {
        return await query({ name, text, values })
      } catch (error) {
        if ((error as { code?: string }).code !== '0A000') throw error
        refused.add(name)
        return query(text, values)
      }
    }) as QueryFn
    client[wrapped] = true
    return client
  }
  return {
    connect: async () => wrap((await pool.connect()) as PostgresPoolClient & { [wrapped]?: true }),
    end: () => pool.end(),
    // kysely opens a separate control connection from these to cancel a running query.
    Client: pool.Client,
    options: pool.options,
  }
}
