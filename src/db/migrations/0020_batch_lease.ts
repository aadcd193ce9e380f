import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Receipt batches, second step (columns typed in `0005_batches.ts`'s `ReceiptBatchesTable`): the run working on a
 * batch holds it. `claimed_by` names the run and `claimed_until` (epoch seconds) is when its hold lapses; a run
 * takes a batch with one conditional update (free, lapsed, or already its own) and every step it records is
 * conditional on still holding it, so of the scheduler of every replica and `npm run batch` running at once one
 * works on a batch and the others leave it. `commit_from_block` is the chain's latest block just before the
 * commit was sent: a run that takes over a batch left `committing` without a hash looks for its `RootCommitted`
 * from there before sending again. Rows from before this migration are free (`claimed_until` 0).
 */
export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('receipt_batches').addColumn('claimed_by', 'varchar(64)').execute()
    await db.schema.alterTable('receipt_batches').addColumn('claimed_until', 'bigint', (c) => c.notNull().defaultTo(0)).execute()
    await db.schema.alterTable('receipt_batches').addColumn('commit_from_block', 'bigint').execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const c of ['commit_from_block', 'claimed_until', 'claimed_by']) {
      await db.schema.alterTable('receipt_batches').dropColumn(c).execute()
    }
  },
}
