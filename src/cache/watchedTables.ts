/**
 * The tables whose changes are reported (`ChangeFeed`), with the column that names the changed row and the
 * operations that matter to a cache of them:
 * - `sessions` (key `token_hash`): the session cache holds positive entries only, so an INSERT cannot make it
 *   wrong; UPDATE (a revocation) and DELETE (cleanup) must drop the entry;
 * - `agent_revisions` (key `agent`): a new revision (INSERT) changes the registry, as would any edit.
 * The PostgreSQL triggers (migration `0012_change_feed`) were written from this list; a new entry needs a new
 * migration there.
 */
export const watchedTables = [
  { table: 'sessions', key: 'token_hash', operations: ['UPDATE', 'DELETE'] },
  { table: 'agent_revisions', key: 'agent', operations: ['INSERT', 'UPDATE', 'DELETE'] },
  // migration 0015: the admin tier's exported files follow these, and a locked replica its key wrap
  { table: 'cabinet_registry', key: 'company', operations: ['INSERT', 'UPDATE', 'DELETE'] },
  { table: 'agent_map', key: 'agent_id', operations: ['INSERT', 'UPDATE', 'DELETE'] },
  { table: 'vault_key_wraps', key: 'recipient_instance', operations: ['INSERT'] },
] as const
