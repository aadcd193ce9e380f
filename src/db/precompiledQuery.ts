import type { Compilable, CompiledQuery, Kysely, Transaction } from 'kysely'

/**
 * A kysely query built and compiled once, run many times with new parameter values. Building a query (the
 * operation-node tree) and compiling it to SQL costs more than an indexed lookup on a cached statement; for
 * the few queries every request runs (the session lookup, the agent registry) that is pure overhead, since
 * only the bound values change. `build` receives unique placeholder values; each call replaces them, in the
 * compiled parameter list, by the real ones. Same SQL text every call, so the statement cache (SQLite) and
 * the named statements (PostgreSQL) reuse one prepared statement.
 */
export function precompiledQuery<DB, Params extends readonly unknown[], Row>(
  db: Kysely<DB>,
  arity: Params['length'],
  build: (db: Kysely<DB>, ...placeholders: string[]) => Compilable<Row>,
): PrecompiledQuery<DB, Params, Row> {
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000precompiled-parameter-${i}\u0000`)
  const compiled = build(db, ...placeholders).compile()
  const slots = compiled.parameters.map((p) => placeholders.indexOf(p as string))
  if (placeholders.some((_, i) => !slots.includes(i))) throw new Error('precompiledQuery: a placeholder is not bound as a parameter')
  const on =
    (executor: Kysely<DB> | Transaction<DB>) =>
    async (...values: Params): Promise<Row[]> => {
      const parameters = slots.map((slot, i) => (slot >= 0 ? values[slot] : compiled.parameters[i]))
      const result = await executor.executeQuery<Row>({ ...compiled, parameters } as CompiledQuery<Row>)
      return result.rows
    }
  return Object.assign(on(db), { on })
}

/** A precompiled query: run on the database it was built with, or `on` a transaction of it. */
export type PrecompiledQuery<DB, Params extends readonly unknown[], Row> = ((...values: Params) => Promise<Row[]>) & {
  on: (executor: Kysely<DB> | Transaction<DB>) => (...values: Params) => Promise<Row[]>
}
