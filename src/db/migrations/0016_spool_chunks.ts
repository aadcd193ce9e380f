import { type Kysely, PostgresAdapter, sql } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Paid bytes on the shared database: `storage_spool_chunks` holds a spooled upload as rows of at
 * most 1 MiB (`seq` 0, 1, …), written and read one chunk at a time, so any replica on the database can finish
 * a dead replica's upload with no shared directory, in bounded memory. Chunked rows rather than large
 * objects: a row goes with a plain DELETE (a large object outlives its reference until `lo_unlink`/`vacuumlo`),
 * needs no transaction held open for the whole stream (the `lo_*` API works only inside one) and no large-object
 * privileges, and pg_dump/replication treat it as any other table. On PostgreSQL the column skips compression
 * (`STORAGE EXTERNAL`): uploads are mostly compressed already, and trying costs CPU on every chunk.
 */
export interface StorageSpoolChunksTable {
  upload_id: string
  seq: number
  bytes: Buffer
  created_at: number
}

export interface SpoolChunkTables {
  storage_spool_chunks: StorageSpoolChunksTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter
    await db.schema
      .createTable('storage_spool_chunks')
      .addColumn('upload_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('bytes', postgres ? 'bytea' : 'blob', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('storage_spool_chunks_pk', ['upload_id', 'seq'])
      .execute()
    if (postgres) await sql`ALTER TABLE storage_spool_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL`.execute(db)
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('storage_spool_chunks').ifExists().execute()
  },
}
