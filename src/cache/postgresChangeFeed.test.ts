import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, testPostgresUrl, type TestDatabase } from '../../tests/support/testDatabase.js'
import { sql } from 'kysely'
import { createDatabase } from '../db/createDatabase.js'
import type { Change } from './ChangeFeed.js'
import type { PostgresChangeFeed } from './postgresChangeFeed.js'

const session = (token_hash: string) => ({ token_hash, wallet: '0xabc', created_at: 1, expires_at: 9_999_999_999, revoked_at: null })

async function until(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe('postgresChangeFeed (through createDatabase)', () => {
  const databases: TestDatabase[] = []
  afterEach(async () => {
    await Promise.all(databases.splice(0).map((d) => d.close()))
  })

  async function subscribed() {
    const database = await createTestDatabase('postgres')
    databases.push(database)
    const feed = database.changeFeed as PostgresChangeFeed
    const changes: Change[] = []
    feed.subscribe((c) => changes.push(c))
    await feed.ready()
    return { database, feed, changes }
  }

  it('reports committed changes of sessions and agent_revisions by any writer, and nothing of another schema', async () => {
    const a = await subscribed()
    const b = await subscribed() // another schema of the same server
    expect(a.feed.live()).toBe(true)
    expect(a.changes).toEqual([{ kind: 'all', reason: 'change feed listening' }])
    await a.database.db.insertInto('sessions').values([session('h1'), session('h2')]).execute()
    await a.database.db.updateTable('sessions').set({ revoked_at: 5 }).where('token_hash', '=', 'h1').execute()
    // A plain SQL statement on another connection is covered too.
    const manual = new pg.Client({ connectionString: a.database.url })
    await manual.connect()
    try {
      await manual.query('DELETE FROM sessions WHERE token_hash = $1', ['h2'])
      await manual.query(`INSERT INTO agent_revisions (agent, revision, instructions, model, created_at) VALUES ('ceo', 2, 'i', 'm', 1)`)
      await manual.query('TRUNCATE sessions')
    } finally {
      await manual.end()
    }
    await until('five changes', () => a.changes.length >= 5)
    expect(a.changes.slice(1)).toEqual([
      { kind: 'row', table: 'sessions', key: 'h1' },
      { kind: 'row', table: 'sessions', key: 'h2' },
      { kind: 'row', table: 'agent_revisions', key: 'ceo' },
      { kind: 'row', table: 'sessions', key: '*' },
    ])
    expect(b.changes).toEqual([{ kind: 'all', reason: 'change feed listening' }])
  })

  it('is not live while its connection is gone, reports it, and listens again after reconnecting', async () => {
    const { database, feed, changes } = await subscribed()
    const pid = feed.backendPid()
    expect(pid).toBeTypeOf('number')
    const admin = new pg.Client({ connectionString: testPostgresUrl })
    await admin.connect()
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [pid])
    } finally {
      await admin.end()
    }
    await until('the loss to be noticed', () => !feed.live())
    expect(changes[1]).toMatchObject({ kind: 'all', reason: expect.stringMatching(/^change feed lost/) })
    await until('listening again', () => feed.live())
    expect(feed.backendPid()).not.toBe(pid)
    expect(changes.at(-1)).toEqual({ kind: 'all', reason: 'change feed listening' })
    await database.db.insertInto('agent_revisions').values({ agent: 'analyst', revision: 2, instructions: 'i', model: 'm', created_at: 1, wallet: null }).execute()
    await until('the change after reconnecting', () => changes.at(-1)?.kind === 'row')
    expect(changes.at(-1)).toEqual({ kind: 'row', table: 'agent_revisions', key: 'analyst' })
  })

  it('barrier: resolves once every listener of the schema acknowledged, and times out while one does not', async () => {
    const a = await subscribed()
    const second = await createDatabase({ url: a.database.url, migrate: false })
    const third = await createDatabase({ url: a.database.url, migrate: false })
    try {
      const bChanges: Change[] = []
      second.changeFeed!.subscribe((c) => bChanges.push(c))
      await second.changeFeed!.ready()
      await a.database.db.updateTable('sessions').set({ revoked_at: 1 }).execute() // nothing to revoke: no row
      await a.database.db.insertInto('agent_revisions').values({ agent: 'ceo', revision: 3, instructions: 'i', model: 'm', created_at: 1, wallet: null }).execute()
      expect(await a.feed.barrier(5_000)).toBe(true)
      // Every change before the barrier reached the other listener before the barrier returned.
      expect(bChanges.at(-1)).toEqual({ kind: 'row', table: 'agent_revisions', key: 'ceo' })
      // A listener that never answers (here: a connection wearing the listeners' name, not listening).
      const name = (await third.db.selectFrom(sql<{ n: string }>`(select 1)`.as('x')).select(sql<string>`'gateway-change-feed:' || md5(current_schema())`.as('n')).executeTakeFirstOrThrow()).n
      const silent = new pg.Client({ connectionString: a.database.url })
      await silent.connect()
      // set after connecting, as the feed names its own: a name in the URL (the test database's) would win over one in the config
      await silent.query(`SET application_name = '${name}'`)
      try {
        const started = Date.now()
        expect(await a.feed.barrier(300)).toBe(false)
        expect(Date.now() - started).toBeGreaterThanOrEqual(290)
      } finally {
        await silent.end()
      }
      expect(await a.feed.barrier(5_000)).toBe(true)
    } finally {
      await second.close()
      await third.close()
    }
  })

  it('does not go live on a schema without the change triggers (migration not applied)', async () => {
    const { database } = await subscribed()
    const admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    try {
      await admin.query('DROP TRIGGER sessions_notify_change ON sessions')
    } finally {
      await admin.end()
    }
    const other = await createDatabase({ url: database.url, migrate: false })
    try {
      other.changeFeed!.subscribe(() => undefined)
      await other.changeFeed!.ready()
      expect(other.changeFeed!.live()).toBe(false)
    } finally {
      await other.close()
    }
  })
})

