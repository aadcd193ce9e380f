/** A write refused by a unique or primary key (PostgreSQL 23505, SQLite's UNIQUE/PRIMARY KEY constraint). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; message?: string }
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || /UNIQUE constraint/i.test(e?.message ?? '')
}
