import type { Compilable, CompiledQuery, Kysely } from 'kysely'

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
): (...values: Params) => Promise<Row[]> {
  const placeholders = Array.from({ length: arity }, (_, i) => `\u0000precompiled-parameter-${i}\u0000`)
  const compiled = build(db, ...placeholders).compile()
  const slots = compiled.parameters.map((p) => placeholders.indexOf(p as string))
  if (placeholders.some((_, i) => !slots.includes(i))) throw new Error('precompiledQuery: a placeholder is not bound as a parameter')
  return async (...values) => {
    const parameters = slots.map((slot, i) => (slot >= 0 ? values[slot] : compiled.parameters[i]))
    const result = await db.executeQuery<Row>({ ...compiled, parameters } as CompiledQuery<Row>)
    return result.rows
  }
}
