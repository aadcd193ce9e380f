import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase } from './createDatabase.js'
import { createTestDatabase, dialects, type TestDatabase, testPostgresUrl } from '../../tests/support/testDatabase.js'

describe.each(dialects)('database on %s', (dialect) => {
  let handle: TestDatabase
  beforeAll(async () => {
    handle = await createTestDatabase(dialect)
  })
  afterAll(async () => {
    await handle?.close()
  })

  it('applies every migration and records them', async () => {
    const rows = await handle.db.selectFrom('kysely_migration' as never).select('name' as never).execute()
    const names = rows.map((r) => (r as { name: string }).name)
    expect(names).toContain('0001_catalogue')
    expect(names).toContain('0002_login')
  })

  it('is idempotent: opening the same database again migrates nothing and keeps rows', async () => {
    await handle.db.insertInto('wallets').values({ wallet: '0xabc', first_login_at: 1, last_login_at: 2 }).execute()
    const second = await createDatabase({ url: handle.url })
    try {
      const row = await second.db.selectFrom('wallets').selectAll().where('wallet', '=', '0xabc').executeTakeFirst()
      expect(row).toEqual({ wallet: '0xabc', first_login_at: 1, last_login_at: 2 })
    } finally {
      await second.close()
    }
  })

  it('returns epoch seconds as numbers on both dialects', async () => {
    await handle.db
      .insertInto('sessions')
      .values({ token_hash: 'h'.repeat(64), wallet: '0xabc', created_at: 1_795_435_200, expires_at: 1_795_521_600, revoked_at: null })
      .execute()
    const row = await handle.db.selectFrom('sessions').selectAll().executeTakeFirstOrThrow()
    expect(typeof row.expires_at).toBe('number')
    expect(row.expires_at).toBe(1_795_521_600)
  })
})

describe('PostgreSQL schemas migrated side by side', () => {
  it('migrates parallel schemas of one server independently (kysely bookkeeping per schema)', async () => {
    const handles = await Promise.all(Array.from({ length: 4 }, () => createTestDatabase('postgres')))
    try {
      for (const h of handles) expect(await h.db.selectFrom('wallets').selectAll().execute()).toEqual([])
    } finally {
      await Promise.all(handles.map((h) => h.close()))
    }
  })
})

describe('PostgreSQL migrations while other schemas are dropped', () => {
  // kysely's bookkeeping introspects every schema of the database; a schema dropped during that look-up failed
  // the migration ("schema … does not exist", naming the other schema) — seen in CI as a gateway that would not
  // start. Other sessions churn schemas with serial columns (what the look-up resolves) while four migrate.
  it('migrates every fresh schema while other sessions create and drop theirs', async () => {
    const admin = new pg.Client({ connectionString: testPostgresUrl })
    await admin.connect()
    let churning = true
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        const name = `churn_${process.pid}_${i}`
        await admin.query(`CREATE SCHEMA "${name}"; CREATE TABLE "${name}".t (id serial primary key, a int, b int, c int)`)
        await admin.query(`DROP SCHEMA "${name}" CASCADE`)
        await new Promise((resolve) => setTimeout(resolve, 20)) // a test file's close every 20 ms: far more than a suite does
      }
    })()
    try {
      for (let round = 0; round < 3; round++) {
        const handles = await Promise.all(Array.from({ length: 4 }, () => createTestDatabase('postgres')))
        await Promise.all(handles.map((h) => h.close()))
      }
    } finally {
      churning = false
      await churn
      await admin.end()
    }
  })
})

describe('SQLite synchronous setting', () => {
  it('syncs every commit by default (full) and at checkpoints with normal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sync-'))
    try {
      for (const [setting, level] of [[undefined, 2], ['full', 2], ['normal', 1]] as const) {
        const handle = await createDatabase({ url: `sqlite:${join(dir, `${setting}.sqlite`)}`, migrate: false, ...(setting ? { sqliteSynchronous: setting } : {}) })
        const row = (await sql<{ synchronous: number }>`pragma synchronous`.execute(handle.db)).rows[0]
        expect(row?.synchronous).toBe(level)
        await handle.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
