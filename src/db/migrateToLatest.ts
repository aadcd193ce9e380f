import type { Kysely } from 'kysely'
import { Migrator } from 'kysely/migration'
import { BaseError } from '../shared/errors/BaseError.js'
import { migrations } from './migrations/index.js'

export class MigrationFailedError extends BaseError<'migration_failed'> {
  override name = 'MigrationFailedError'
  constructor(migration: string, cause: unknown) {
    super('migration_failed', `Database migration "${migration}" failed.`, { cause })
  }
}

/**
 * PostgreSQL errors kysely's bookkeeping can meet when another session changes a schema of the same database
 * meanwhile: before it migrates, kysely looks for its tables by introspecting every schema, with
 * `pg_get_serial_sequence('<schema>.<table>', …)` per column, and a schema dropped (3F000), a table dropped
 * (42P01) or a column renamed or dropped (42703: `column "cutoff_at" of relation "receipt_batches" does not
 * exist`, another schema's migration running) between the catalog scan and that look-up fails the whole query.
 * Seen when test files migrate and drop their schemas while others start; a database shared with other tenants
 * can do the same.
 */
const CATALOG_RACE = new Set(['3F000', '42P01', '42703', 'XX000'])

/** Whether `error` (or one of its causes) is one of the `CATALOG_RACE` errors. */
export function isCatalogRace(error: unknown): boolean {
  for (let e: unknown = error; e; e = (e as { cause?: unknown }).cause) if (CATALOG_RACE.has((e as { code?: string }).code ?? '')) return true
  return false
}

/**
 * Applies every migration of `migrations/index.ts` in name order; one set serves SQLite and PostgreSQL.
 * On PostgreSQL pass the connection's `current_schema()` as `schema`: kysely otherwise decides whether its
 * bookkeeping tables exist by looking at every schema of the database, and skips creating them when another
 * schema (another tenant, a parallel test run) already has them. Its look-up can fail when another schema is
 * dropped at that moment (`CATALOG_RACE`); no migration has run then, and it is tried again (up to 10 times,
 * 1.4–1.9 s in all).
 */
export async function migrateToLatest(db: Kysely<any>, { schema, to }: { schema?: string | undefined; /** Stop after this migration (tests of one migration). */ to?: string } = {}): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) })
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await (to === undefined ? migrator.migrateToLatest() : migrator.migrateTo(to))
    if (!error) return
    const failed = results?.find((r) => r.status === 'Error')?.migrationName
    if (failed === undefined && attempt < 10 && isCatalogRace(error)) {
      await new Promise((resolve) => setTimeout(resolve, 25 * attempt + Math.random() * 50))
      continue
    }
    throw new MigrationFailedError(failed ?? 'unknown', error)
  }
}
