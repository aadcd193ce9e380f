import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * x402 `payment-identifier`: one row per identifier a payer sent with a paid request, taken
 * BEFORE anything settles (a unique insert), so concurrent retries with one identifier — on any instance of
 * the database — find it taken. `fingerprint` says what was paid for (route, network, payer or transaction,
 * file digest and size); a retry with the same identifier and fingerprint gets the first result, anything
 * else with that identifier is refused. `ref` is the upload the identifier produced.
 */
export interface PaymentIdentifiersTable {
  scope: string
  payment_identifier: string
  fingerprint: string
  ref: string
  created_at: number
}

export interface PaymentIdentifierTables {
  payment_identifiers: PaymentIdentifiersTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('payment_identifiers')
      .addColumn('scope', 'varchar(64)', (c) => c.notNull())
      .addColumn('payment_identifier', 'varchar(128)', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('ref', 'varchar(128)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('payment_identifiers_pk', ['scope', 'payment_identifier'])
      .execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('payment_identifiers').ifExists().execute()
  },
}
