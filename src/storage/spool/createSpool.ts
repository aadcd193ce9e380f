import { join } from 'node:path'
import { type Kysely, PostgresAdapter } from 'kysely'
import { ConfigError } from '../../config/ConfigError.js'
import type { Database } from '../../db/Database.js'
import type { StorageConfig } from '../config.js'
import { Spool } from '../Spool.js'
import { LocalDirSpoolStore } from './LocalDirSpoolStore.js'
import { PostgresSpoolStore } from './PostgresSpoolStore.js'
import { S3SpoolStore } from './S3SpoolStore.js'
import type { SpoolStore } from './SpoolStore.js'

/**
 * The spool of this instance (`SERVICE_STORAGE__SPOOL_STORE`): on PostgreSQL the database itself by default,
 * so replicas need no shared mount; on SQLite (one instance) the spool directory. Every store this
 * instance can reach also reads, so references recorded under an earlier setting are still finished.
 */
export function createSpool(db: Kysely<Database>, storage: StorageConfig): Spool {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter
  const local = new LocalDirSpoolStore(storage.sharedSpoolDir)
  const readers: SpoolStore[] = postgres ? [new PostgresSpoolStore(db)] : []
  let store: SpoolStore
  switch (storage.spoolStore) {
    case 'local':
      store = local
      break
    case 's3':
      store = new S3SpoolStore(storage.s3!)
      break
    case 'postgres':
      if (!postgres) throw new ConfigError('SERVICE_STORAGE__SPOOL_STORE', 'postgres needs a PostgreSQL SERVICE_DATABASE_URL (use local or s3 with SQLite)')
      store = readers[0]!
      break
    case 'auto':
      store = postgres ? readers[0]! : local
  }
  return new Spool({ db, store, local, readers, tmpDir: join(storage.spoolDir, 'tmp'), dbMaxBytes: storage.dbSpoolMaxBytes })
}
