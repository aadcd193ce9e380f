import { type ColumnType, type Kysely, PostgresAdapter } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Several gateway instances on one database (seed 000 §3.5, §8):
 * - `gateway_instances`: one row per instance identity (`SERVICE_INSTANCE_ID`, kept across restarts), with
 *   its heartbeat; an instance whose heartbeat is older than the lease is dead and its in-flight paid
 *   uploads are taken over by a live one;
 * - `storage_uploads.owner_instance`: who is working on an upload right now (set by the atomic claim);
 * - `storage_spool`: the paid-but-not-yet-stored bytes of small uploads, readable by every instance (large
 *   ones go to the shared spool directory);
 * - `rate_limit_counters`: the per-address fixed windows of the rate limit when it is shared
 *   (`SERVICE_RATE_LIMIT__STORE=database`).
 */
export interface GatewayInstancesTable {
  instance_id: string
  host: string
  pid: number
  started_at: number
  heartbeat_at: number
  /** Set by a clean shutdown: the instance's work may be taken over at once. */
  stopped_at: number | null
  /** Migration 0015: the replica's ephemeral X25519 key (base64url) for unlock propagation; null when none. */
  unlock_public_key: ColumnType<string | null, string | null | undefined, string | null>
  /** Migration 0015: HMAC-SHA256 of instance id and public key under a key derived from `SHADOW_JWT_SECRET`. */
  unlock_key_mac: ColumnType<string | null, string | null | undefined, string | null>
  /** Migration 0015: 1 while the replica holds the data key. */
  vault_unlocked: ColumnType<number, number | undefined, number>
}

export interface StorageSpoolTable {
  upload_id: string
  bytes: Buffer
  created_at: number
}

export interface RateLimitCountersTable {
  key: string
  count: number
  reset_at_ms: number
}

export interface ClusterTables {
  gateway_instances: GatewayInstancesTable
  storage_spool: StorageSpoolTable
  rate_limit_counters: RateLimitCountersTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const postgres = db.getExecutor().adapter instanceof PostgresAdapter
    await db.schema
      .createTable('gateway_instances')
      .addColumn('instance_id', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('host', 'varchar(255)', (c) => c.notNull())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .addColumn('stopped_at', 'bigint')
      .execute()
    await db.schema.alterTable('storage_uploads').addColumn('owner_instance', 'varchar(128)').execute()
    await db.schema
      .createTable('storage_spool')
      .addColumn('upload_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('bytes', postgres ? 'bytea' : 'blob', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('rate_limit_counters')
      .addColumn('key', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addColumn('reset_at_ms', 'bigint', (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('rate_limit_counters').ifExists().execute()
    await db.schema.dropTable('storage_spool').ifExists().execute()
    await db.schema.alterTable('storage_uploads').dropColumn('owner_instance').execute()
    await db.schema.dropTable('gateway_instances').ifExists().execute()
  },
}
