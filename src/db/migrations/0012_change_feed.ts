import { type Kysely, PostgresAdapter, sql } from 'kysely'
import type { Migration } from 'kysely/migration'

/**
 * Change notifications for the gateway's caches (`src/cache/`): on PostgreSQL, triggers on
 * `sessions` (UPDATE, DELETE) and `agent_revisions` (INSERT, UPDATE, DELETE) send
 * `pg_notify('gateway_changes_' || md5(<schema>), '<table>:<key>')`, and TRUNCATE sends `'<table>:*'`.
 * NOTIFY is delivered at commit, so every writer is covered: any gateway instance, a CLI, a manual statement.
 * The channel names the schema so instances on different schemas do not invalidate each other.
 * SQLite needs nothing here: its notifications are TEMP triggers on the gateway's own connection
 * (`sqliteChangeFeed`), as a persistent trigger would call a function other connections do not have.
 */
export const migration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
    await sql`
      CREATE OR REPLACE FUNCTION gateway_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        channel text := 'gateway_changes_' || md5(TG_TABLE_SCHEMA);
        changed jsonb;
      BEGIN
        IF TG_LEVEL = 'STATEMENT' THEN
          PERFORM pg_notify(channel, TG_TABLE_NAME || ':*');
          RETURN NULL;
        END IF;
        IF TG_OP = 'INSERT' THEN changed := to_jsonb(NEW); ELSE changed := to_jsonb(OLD); END IF;
        PERFORM pg_notify(channel, TG_TABLE_NAME || ':' || (changed ->> TG_ARGV[0]));
        RETURN NULL;
      END
      $$`.execute(db)
    await sql`CREATE TRIGGER sessions_notify_change AFTER UPDATE OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION gateway_notify_change('token_hash')`.execute(db)
    await sql`CREATE TRIGGER sessions_notify_truncate AFTER TRUNCATE ON sessions FOR EACH STATEMENT EXECUTE FUNCTION gateway_notify_change()`.execute(db)
    await sql`CREATE TRIGGER agent_revisions_notify_change AFTER INSERT OR UPDATE OR DELETE ON agent_revisions FOR EACH ROW EXECUTE FUNCTION gateway_notify_change('agent')`.execute(db)
    await sql`CREATE TRIGGER agent_revisions_notify_truncate AFTER TRUNCATE ON agent_revisions FOR EACH STATEMENT EXECUTE FUNCTION gateway_notify_change()`.execute(db)
  },
  async down(db: Kysely<any>): Promise<void> {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
    await sql`DROP TRIGGER IF EXISTS agent_revisions_notify_truncate ON agent_revisions`.execute(db)
    await sql`DROP TRIGGER IF EXISTS agent_revisions_notify_change ON agent_revisions`.execute(db)
    await sql`DROP TRIGGER IF EXISTS sessions_notify_truncate ON sessions`.execute(db)
    await sql`DROP TRIGGER IF EXISTS sessions_notify_change ON sessions`.execute(db)
    await sql`DROP FUNCTION IF EXISTS gateway_notify_change()`.execute(db)
  },
}
