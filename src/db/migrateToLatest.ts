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

/** Applies every migration of `migrations/index.ts` in name order; one set serves SQLite and PostgreSQL. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown'
    throw new MigrationFailedError(failed, error)
  }
}
