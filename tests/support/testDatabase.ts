/**
 * Test helpers: a fresh, isolated database per test file on either dialect.
 * PostgreSQL runs in a schema of its own (created here, dropped on close) selected through the pool's
 * `options=-c search_path=…`, so parallel test runs on one server never see each other's rows; its connections are
 * named after it (`application_name`).
 * The server is `TEST_DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/test`).
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { createDatabase, type DatabaseDialect, type DatabaseHandle } from '../../src/db/createDatabase.js'

export const testPostgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

export type TestDatabase = DatabaseHandle & {
  /** URL that opens the same database (for a second handle, e.g. a second gateway process). */
  url: string
}

/** Both dialects, for `describe.each(dialects)`. */
export const dialects: DatabaseDialect[] = ['sqlite', 'postgres']

export async function createTestDatabase(dialect: DatabaseDialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gw-db-'))
    const url = `sqlite:${join(dir, 'test.sqlite')}`
    const handle = await createDatabase({ url })
    return {
      ...handle,
      url,
      close: async () => {
        await handle.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const schema = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: testPostgresUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`)
  } finally {
    await admin.end()
  }
  const separator = testPostgresUrl.includes('?') ? '&' : '?'
  // its connections carry the schema's name, so a test can single them out (pg_stat_activity.application_name)
  const url = `${testPostgresUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}&application_name=${schema}`
  const handle = await createDatabase({ url })
  return {
    ...handle,
    url,
    close: async () => {
      await handle.close()
      const cleanup = new pg.Client({ connectionString: testPostgresUrl })
      await cleanup.connect()
      try {
        await cleanup.query(`DROP SCHEMA "${schema}" CASCADE`)
      } finally {
        await cleanup.end()
      }
    },
  }
}
