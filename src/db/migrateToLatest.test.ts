import { describe, expect, it } from 'vitest'
import { isCatalogRace } from './migrateToLatest.js'

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code })

describe('isCatalogRace: which failures of kysely\'s introspection before any migration are tried again', () => {
  it.each([
    ['3F000', 'schema "t_x" does not exist'],
    ['42P01', 'relation "t_x.sessions" does not exist'],
    ['42703', 'column "cutoff_at" of relation "receipt_batches" does not exist'], // failed CI: another schema's migration
    ['XX000', 'cache lookup failed for relation 123'],
  ])('%s (%s), also as the cause of kysely\'s error', (code, message) => {
    expect(isCatalogRace(pgError(code, message))).toBe(true)
    expect(isCatalogRace(new Error('migration failed', { cause: pgError(code, message) }))).toBe(true)
  })

  it('not other errors: a unique violation, a syntax error, a refused connection, no code at all', () => {
    for (const code of ['23505', '42601', 'ECONNREFUSED']) expect(isCatalogRace(pgError(code, code))).toBe(false)
    expect(isCatalogRace(new Error('plain'))).toBe(false)
    expect(isCatalogRace(undefined)).toBe(false)
  })
})
