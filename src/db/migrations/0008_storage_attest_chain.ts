import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Paid storage, third step (columns typed in `0004_storage.ts`'s `StorageUploadsTable`): where the
 * verifier's StorageAttest attestation (0007's `attest_tx_hash`) was sent — `attest_chain_id` and
 * `attest_contract`, recorded with the tx hash, so `GET /store/uploads/{upload_id}` can show it. Rows
 * attested before this migration keep NULL in both.
 */
export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('storage_uploads').addColumn('attest_chain_id', 'bigint').execute()
    await db.schema.alterTable('storage_uploads').addColumn('attest_contract', 'varchar(42)').execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const c of ['attest_contract', 'attest_chain_id']) {
      await db.schema.alterTable('storage_uploads').dropColumn(c).execute()
    }
  },
}
