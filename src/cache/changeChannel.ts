/**
 * The PostgreSQL NOTIFY channel of a schema's changes, as SQL over a schema-name expression. The schema is
 * part of the name so instances on different schemas of one database (tenants, parallel tests) never
 * invalidate each other's caches; it is hashed because a channel name is limited to 63 bytes. The triggers of
 * migration `0012_change_feed` compute the same name from `TG_TABLE_SCHEMA`.
 */
export function changeChannelSql(schemaExpression: string): string {
  return `'gateway_changes_' || md5(${schemaExpression})`
}
