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
 * Applies every migration of `migrations/index.ts` in name order; one set serves SQLite and PostgreSQL.
 * On PostgreSQL pass the connection's `current_schema()` as `schema`: kysely otherwise decides whether its
 * bookkeeping tables exist by looking at every schema of the database, and skips creating them when another
 * schema (another tenant, a parallel test run) already has them.
 */
export async function migrateToLatest(db: Kysely<any>, { schema }: { schema?: string | undefined } = {}): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'
    throw new MigrationFailedError(failed, error)
  }
}
