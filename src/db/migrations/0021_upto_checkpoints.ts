import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Checkpoints of running `upto` calls (columns typed in `0010_cost_ledger.ts`'s `CostPaymentsTable`). An `upto`
 * call settles only once its stream ends; while it runs, the instance serving it keeps on its `cost_payments` row
 * who serves it (`owner`, the instance id), when it last said so (`heartbeat_at`, epoch seconds), the tokens
 * served so far (`checkpoint_tokens`), what they cost (`checkpoint_amount`, atomic units, decimal string, never
 * above `price_atomic`: the cap) and the facilitator settle request for that amount (`checkpoint_request`, JSON),
 * with the permit's deadline (`valid_until`). A claimed row whose heartbeat stopped (its instance died
 * mid-stream) is taken by another replica and becomes a settlement debt of the checkpointed amount. Rows of other
 * schemes, and rows from before this migration, have no heartbeat and are never taken.
 */
export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('cost_payments').addColumn('owner', 'varchar(128)').execute()
    await db.schema.alterTable('cost_payments').addColumn('heartbeat_at', 'bigint').execute()
    await db.schema.alterTable('cost_payments').addColumn('checkpoint_tokens', 'bigint').execute()
    await db.schema.alterTable('cost_payments').addColumn('checkpoint_amount', 'text').execute()
    await db.schema.alterTable('cost_payments').addColumn('checkpoint_request', 'text').execute()
    await db.schema.alterTable('cost_payments').addColumn('valid_until', 'bigint').execute()
    // the sweep of every replica: claimed rows whose heartbeat is older than the lease
    await db.schema.createIndex('cost_payments_heartbeat').on('cost_payments').columns(['status', 'heartbeat_at']).execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropIndex('cost_payments_heartbeat').ifExists().execute()
    for (const c of ['valid_until', 'checkpoint_request', 'checkpoint_amount', 'checkpoint_tokens', 'heartbeat_at', 'owner']) {
      await db.schema.alterTable('cost_payments').dropColumn(c).execute()
    }
  },
}
