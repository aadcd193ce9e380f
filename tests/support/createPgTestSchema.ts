import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { createShadowNoncesTable, type ShadowTables } from '../../src/db/migrations/0003_shadow.js'

/** PostgreSQL used by the tests (trust auth); each run isolates itself in a fresh schema. */
export const TEST_POSTGRES_URL = process.env.SHADOW_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export function openPgInSchema(schema: string, max = 4): Kysely<ShadowTables> {
  const pool = new pg.Pool({ connectionString: TEST_POSTGRES_URL, max, options: `-c search_path=${schema}` })
  return new Kysely<ShadowTables>({ dialect: new PostgresDialect({ pool }) })
}

export async function createPgTestSchema(): Promise<{ schema: string; db: Kysely<ShadowTables>; drop: () => Promise<void> }> {
  const schema = `shadow_test_${Date.now()}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL })
  await admin.connect()
  await admin.query(`CREATE SCHEMA "${schema}"`)
  await admin.end()
  const db = openPgInSchema(schema)
  await createShadowNoncesTable(db)
  return {
    schema,
    db,
    drop: async () => {
      await db.destroy()
      const c = new pg.Client({ connectionString: TEST_POSTGRES_URL })
      await c.connect()
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await c.end()
    },
  }
}
