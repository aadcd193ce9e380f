import { randomBytes } from 'node:crypto'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { createShadowNoncesTable, type ShadowTables } from '../../src/db/migrations/0003_shadow.js'
import { testPostgresUrl } from './testDatabase.js'

export function openPgInSchema(schema: string, max = 4): Kysely<ShadowTables> {
  const pool = new pg.Pool({ connectionString: testPostgresUrl, max, options: `-c search_path=${schema}` })
  return new Kysely<ShadowTables>({ dialect: new PostgresDialect({ pool }) })
}

/**
 * A fresh schema holding `shadow_nonces` on the PostgreSQL every test uses (`TEST_DATABASE_URL`, read in
 * testDatabase.ts), so parallel runs never see each other's nonces.
 */
export async function createPgTestSchema(): Promise<{ schema: string; db: Kysely<ShadowTables>; drop: () => Promise<void> }> {
  const schema = `shadow_test_${Date.now()}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: testPostgresUrl })
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
      const c = new pg.Client({ connectionString: testPostgresUrl })
      await c.connect()
      await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      await c.end()
    },
  }
}
