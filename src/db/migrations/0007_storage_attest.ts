import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Paid storage, second step (columns typed in `0004_storage.ts`'s `StorageUploadsTable`):
 * - `stored_at`: when the upstream accepted the data item (epoch seconds); rows stored before this
 *   migration keep NULL and readers fall back to `created_at`;
 * - the on-chain attestation of a verified upload through StorageAttest (seed 000 §4.8), made by the
 *   verifier when configured: `attest_tx_hash` once done, else `attest_attempts`, `next_attest_at` and
 *   `attest_error` for the retries.
 */
export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('storage_uploads').addColumn('stored_at', 'bigint').execute()
    await db.schema.alterTable('storage_uploads').addColumn('attest_tx_hash', 'varchar(80)').execute()
    await db.schema.alterTable('storage_uploads').addColumn('attest_attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute()
    await db.schema.alterTable('storage_uploads').addColumn('next_attest_at', 'bigint').execute()
    await db.schema.alterTable('storage_uploads').addColumn('attest_error', 'text').execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const c of ['attest_error', 'next_attest_at', 'attest_attempts', 'attest_tx_hash', 'stored_at']) {
      await db.schema.alterTable('storage_uploads').dropColumn(c).execute()
    }
  },
}
