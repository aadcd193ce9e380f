import type { Kysely } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Catalogue index (seed 000 §2.6). The append-only JSON-lines log is the record; this table indexes it so
 * `GET /insight/catalogue/recent` does not scan the log. `payload` is the JSON text of the event's payload.
 */
export interface CatalogueEventsTable {
  event_id: string
  kind: string
  actor: string
  at: number
  severity: string
  payload: string
  source_log: string
}

export interface CatalogueTables {
  catalogue_events: CatalogueEventsTable
}

export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('catalogue_events')
      .addColumn('event_id', 'varchar(64)', (c) => c.primaryKey())
      .addColumn('kind', 'varchar(128)', (c) => c.notNull())
      .addColumn('actor', 'varchar(128)', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('severity', 'varchar(16)', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('source_log', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('catalogue_events_kind_at').on('catalogue_events').columns(['kind', 'at']).execute()
    await db.schema.createIndex('catalogue_events_at').on('catalogue_events').column('at').execute()
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('catalogue_events').execute()
  },
}
