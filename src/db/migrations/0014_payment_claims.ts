import { type Kysely, sql } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * One claim namespace for every paid route (no replay across routes): a payment — (network, payer,
 * nonce): the EIP-3009 authorization's nonce, or an Algorand transaction id — is claimed here, by a unique
 * insert, just before its route's own row (`storage_deposits` for `/store`, in the same transaction;
 * `cost_payments` for a cost route) and BEFORE the facilitator hears of it. Before this table each route claimed
 * in its own table, so one authorization whose value covered both prices passed both local claims: sent to
 * `/store` and a cost route at once, both verified and the cost call ran the model for a payment `/store`
 * settled; claimed by a `/store` instance that then died, it paid a cost call whose transfer recovery then
 * also counted for the upload (two services, one transfer). `route` and `ref` say who holds the claim
 * (`store` + deposit id, or the cost route + payment id); a claim released unsettled is deleted with its row.
 * Existing claims of both tables are copied in (the first one of a key wins).
 */
export interface PaymentClaimsTable {
  network: string
  payer: string
  nonce: string
  route: string
  ref: string
  created_at: number
}

export interface PaymentClaimTables {
  payment_claims: PaymentClaimsTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('payment_claims')
      .addColumn('network', 'varchar(128)', (c) => c.notNull())
      .addColumn('payer', 'varchar(128)', (c) => c.notNull())
      .addColumn('nonce', 'varchar(128)', (c) => c.notNull())
      .addColumn('route', 'varchar(64)', (c) => c.notNull())
      .addColumn('ref', 'varchar(64)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('payment_claims_pk', ['network', 'payer', 'nonce'])
      .execute()
    await db.schema.createIndex('payment_claims_ref').on('payment_claims').column('ref').execute()
    // SQLite reads `INSERT … SELECT … ON CONFLICT` only when the SELECT has a WHERE (its parsing ambiguity)
    const always = sql<boolean>`1 = 1`
    const columns = ['network', 'payer', 'nonce', 'route', 'ref', 'created_at'] as const
    await db
      .insertInto('payment_claims')
      .columns([...columns])
      .expression((eb) => eb.selectFrom('storage_deposits').select(['network', 'payer', 'nonce', eb.val('store').as('route'), 'deposit_id', 'created_at']).where(always))
      .onConflict((oc) => oc.doNothing())
      .execute()
    await db
      .insertInto('payment_claims')
      .columns([...columns])
      .expression((eb) => eb.selectFrom('cost_payments').select(['network', 'payer', 'nonce', 'route', 'payment_id', 'created_at']).where(always))
      .onConflict((oc) => oc.doNothing())
      .execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('payment_claims').ifExists().execute()
  },
}
