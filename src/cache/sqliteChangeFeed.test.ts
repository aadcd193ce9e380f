import SQLite from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../tests/support/testDatabase.js'
import type { Change } from './ChangeFeed.js'
import { sqliteChangeFeed } from './sqliteChangeFeed.js'

const session = (token_hash: string) => ({ token_hash, wallet: '0xabc', created_at: 1, expires_at: 9_999_999_999, revoked_at: null })

describe('sqliteChangeFeed (through createDatabase)', () => {
  let database: TestDatabase | undefined
  afterEach(async () => {
    await database?.close()
    database = undefined
  })

  async function subscribed() {
    database = await createTestDatabase('sqlite')
    const feed = database.changeFeed!
    const changes: Change[] = []
    feed.subscribe((c) => changes.push(c))
    return { db: database.db, feed, changes }
  }

  it('reports UPDATE and DELETE of sessions and every write of agent_revisions made through kysely, synchronously', async () => {
    const { db, feed, changes } = await subscribed()
    expect(feed.live()).toBe(true)
    await db.insertInto('sessions').values([session('h1'), session('h2')]).execute()
    expect(changes).toEqual([]) // a new session cannot make a positive cache wrong
    await db.updateTable('sessions').set({ revoked_at: 5 }).where('token_hash', '=', 'h1').execute()
    expect(changes).toEqual([{ kind: 'row', table: 'sessions', key: 'h1' }])
    await db.deleteFrom('sessions').execute()
    await db.insertInto('agent_revisions').values({ agent: 'ceo', revision: 2, instructions: 'i', model: 'm', created_at: 1, wallet: null }).execute()
    await db.deleteFrom('agent_revisions').where('agent', '=', 'ceo').execute()
    expect(changes.slice(1)).toEqual([
      { kind: 'row', table: 'sessions', key: 'h1' },
      { kind: 'row', table: 'sessions', key: 'h2' },
      { kind: 'row', table: 'agent_revisions', key: 'ceo' },
      { kind: 'row', table: 'agent_revisions', key: 'ceo' },
    ])
    expect(feed.live()).toBe(true)
    expect(changes.some((c) => c.kind === 'all')).toBe(false) // our own writes do not move data_version
  })

  it('reports `all` at the next live() after another connection committed, of any table', async () => {
    const { feed, changes } = await subscribed()
    const other = new SQLite(database!.url.slice('sqlite:'.length))
    try {
      other.prepare('INSERT INTO wallets (wallet, first_login_at, last_login_at) VALUES (?, 1, 1)').run('0xdef')
      expect(changes).toEqual([]) // the other connection has neither the triggers nor the function
      expect(feed.live()).toBe(true)
      expect(changes).toEqual([{ kind: 'all', reason: 'another connection committed' }])
      expect(feed.live()).toBe(true)
      expect(changes).toHaveLength(1)
    } finally {
      other.close()
    }
  })

  it('is not live before its first subscriber installed the triggers, nor after close', async () => {
    database = await createTestDatabase('sqlite')
    const feed = database.changeFeed!
    expect(feed.live()).toBe(false)
    feed.subscribe(() => undefined)
    expect(feed.live()).toBe(true)
    await feed.close()
    expect(feed.live()).toBe(false)
  })

  it('is never live on a database without the watched tables (not migrated)', async () => {
    const raw = new SQLite(':memory:')
    try {
      const feed = sqliteChangeFeed(raw)
      feed.subscribe(() => undefined)
      expect(feed.live()).toBe(false)
    } finally {
      raw.close()
    }
  })
})
