import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Tables of the shadow domain.
 *
 * `shadow_nonces`: one row per issued shadow challenge (seed 000 §2.2, §3.1). A row is single use: it is
 * accepted by one conditional UPDATE (`… WHERE nonce = ? AND consumed_at IS NULL AND expires_at > now`), so
 * two gateway processes sharing one PostgreSQL can never both accept it. Rows are pruned a while after
 * they expire (see `src/shadow/NonceStore.ts`).
 */
export interface ShadowNoncesTable {
  /** `0x` + 64 lowercase hex. */
  nonce: string
  scope: string
  /** JSON object of the bound parameters, keys in the scope's order. */
  params: string
  /** The exact challenge text the overlord signs. */
  message: string
  issued_at: number
  expires_at: number
  /** Epoch seconds when consumed; null while issued. */
  consumed_at: number | null
}

export interface ShadowTables {
  shadow_nonces: ShadowNoncesTable
}

/** Creates the nonce table when missing; also used for the separate SQLite file of `SHADOW_NONCES_PATH`. */
export async function createShadowNoncesTable(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('shadow_nonces')
    .ifNotExists()
    .addColumn('nonce', 'varchar(66)', (c) => c.primaryKey())
    .addColumn('scope', 'varchar(32)', (c) => c.notNull())
    .addColumn('params', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('consumed_at', 'bigint')
    .execute()
  await db.schema.createIndex('shadow_nonces_expires_at').ifNotExists().on('shadow_nonces').column('expires_at').execute()
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await createShadowNoncesTable(db)
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('shadow_nonces').ifExists().execute()
  },
}
