import { type Kysely, PostgresAdapter, sql } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * The shadow-overlord tier's state belongs to the deployment, not to one replica: before this
 * migration the vault, the cabinet registry and the agent map were JSON files in each replica's data
 * directory, so a cabinet provisioned through one replica was unknown to the others.
 * - `vault_meta`: the one vault header (id `vault`): the HKDF salt and the data key wrapped by the
 *   overlord-derived key-encryption key, plus a commitment to the data key (HMAC-SHA256 keyed by it) that a
 *   replica checks before it adopts a data key sent by a peer;
 * - `vault_entries`: each entry AES-256-GCM under the data key with its id as associated data (as in the file);
 * - `cabinet_registry`: one public block per company (members as JSON; `vault_pk_id` stays internal);
 * - `agent_map`: soldier addresses by agent id (null once cleared);
 * - `vault_key_wraps`: the data key wrapped to one locked replica's ephemeral X25519 key (ECDH + HKDF +
 *   AES-256-GCM), picked up and deleted by that replica (`src/cluster/UnlockPropagation.ts`);
 * - `gateway_instances.unlock_public_key` / `unlock_key_mac` / `vault_unlocked`: what each replica publishes
 *   with its heartbeat (the MAC, keyed from the deployment's `SHADOW_JWT_SECRET`, shows the key is a replica's:
 *   a row written by someone with database access alone receives no wrap).
 * On PostgreSQL, the registry, the agent map and the wraps notify the change feed (migration 0012's function),
 * so each replica rewrites its exported files and a locked replica picks up its wrap at once.
 */
export interface VaultMetaTable {
  id: string
  vault_id: string
  overlord_address: string
  kdf_salt: string
  kdf_info: string
  wrapped_nonce: string
  wrapped_ciphertext: string
  key_commitment: string
  created_at: number
}

export interface VaultEntriesTable {
  entry_id: string
  context: string
  nonce: string
  ciphertext: string
  created_at: number
}

export interface CabinetRegistryTable {
  company: string
  provisioned_at: number
  /** JSON array of `RegistryMember`. */
  members: string
}

export interface AgentMapTable {
  agent_id: string
  company: string
  role: string
  address: string | null
}

export interface VaultKeyWrapsTable {
  recipient_instance: string
  /** The recipient's published X25519 key (base64url) the wrap was made for. */
  recipient_public_key: string
  sender_instance: string
  /** The sender's one-time X25519 key (base64url). */
  ephemeral_public_key: string
  nonce: string
  ciphertext: string
  created_at: number
}

export interface AdminTierTables {
  vault_meta: VaultMetaTable
  vault_entries: VaultEntriesTable
  cabinet_registry: CabinetRegistryTable
  agent_map: AgentMapTable
  vault_key_wraps: VaultKeyWrapsTable
}

const NOTIFIED: [table: string, key: string, operations: string][] = [
  ['cabinet_registry', 'company', 'INSERT OR UPDATE OR DELETE'],
  ['agent_map', 'agent_id', 'INSERT OR UPDATE OR DELETE'],
  ['vault_key_wraps', 'recipient_instance', 'INSERT'],
]

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('vault_meta')
      .addColumn('id', 'varchar(16)', (c) => c.primaryKey())
      .addColumn('vault_id', 'varchar(64)', (c) => c.notNull())
      .addColumn('overlord_address', 'varchar(42)', (c) => c.notNull())
      .addColumn('kdf_salt', 'varchar(64)', (c) => c.notNull())
      .addColumn('kdf_info', 'varchar(64)', (c) => c.notNull())
      .addColumn('wrapped_nonce', 'varchar(24)', (c) => c.notNull())
      .addColumn('wrapped_ciphertext', 'varchar(128)', (c) => c.notNull())
      .addColumn('key_commitment', 'varchar(64)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('vault_entries')
      .addColumn('entry_id', 'varchar(512)', (c) => c.primaryKey())
      .addColumn('context', 'varchar(64)', (c) => c.notNull())
      .addColumn('nonce', 'varchar(24)', (c) => c.notNull())
      .addColumn('ciphertext', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('cabinet_registry')
      .addColumn('company', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('provisioned_at', 'bigint', (c) => c.notNull())
      .addColumn('members', 'text', (c) => c.notNull())
      .execute()
    await db.schema
      .createTable('agent_map')
      .addColumn('agent_id', 'varchar(512)', (c) => c.primaryKey())
      .addColumn('company', 'varchar(64)', (c) => c.notNull())
      .addColumn('role', 'varchar(32)', (c) => c.notNull())
      .addColumn('address', 'varchar(42)')
      .execute()
    await db.schema
      .createTable('vault_key_wraps')
      .addColumn('recipient_instance', 'varchar(128)', (c) => c.primaryKey())
      .addColumn('recipient_public_key', 'varchar(64)', (c) => c.notNull())
      .addColumn('sender_instance', 'varchar(128)', (c) => c.notNull())
      .addColumn('ephemeral_public_key', 'varchar(64)', (c) => c.notNull())
      .addColumn('nonce', 'varchar(24)', (c) => c.notNull())
      .addColumn('ciphertext', 'varchar(128)', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute()
    await db.schema.alterTable('gateway_instances').addColumn('unlock_public_key', 'varchar(64)').execute()
    await db.schema.alterTable('gateway_instances').addColumn('unlock_key_mac', 'varchar(64)').execute()
    await db.schema
      .alterTable('gateway_instances')
      .addColumn('vault_unlocked', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
    for (const [table, key, operations] of NOTIFIED) {
      await sql`CREATE TRIGGER ${sql.raw(`${table}_notify_change`)} AFTER ${sql.raw(operations)} ON ${sql.table(table)} FOR EACH ROW EXECUTE FUNCTION gateway_notify_change(${sql.lit(key)})`.execute(db)
      await sql`CREATE TRIGGER ${sql.raw(`${table}_notify_truncate`)} AFTER TRUNCATE ON ${sql.table(table)} FOR EACH STATEMENT EXECUTE FUNCTION gateway_notify_change()`.execute(db)
    }
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('gateway_instances').dropColumn('vault_unlocked').execute()
    await db.schema.alterTable('gateway_instances').dropColumn('unlock_key_mac').execute()
    await db.schema.alterTable('gateway_instances').dropColumn('unlock_public_key').execute()
    for (const table of ['vault_key_wraps', 'agent_map', 'cabinet_registry', 'vault_entries', 'vault_meta']) await db.schema.dropTable(table).ifExists().execute()
  },
}
