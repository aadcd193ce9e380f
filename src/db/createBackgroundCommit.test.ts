import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createBackgroundCommit, type LogSync } from './createBackgroundCommit.js'
import { createDatabase, type DatabaseHandle } from './createDatabase.js'
import type { Database } from './Database.js'

const wallet = (n: number) => ({ wallet: `0x${String(n).padStart(40, '0')}`, first_login_at: n, last_login_at: n })

/** A log sync the test finishes by hand, recording what another connection saw of the database when it began. */
function manualSync(path: string) {
  const started: { rows: number; finish: () => void }[] = []
  const log: LogSync = {
    sync: () =>
      new Promise<void>((finish) => {
        const reader = new SQLite(path, { readonly: true })
        started.push({ rows: (reader.prepare('SELECT count(*) AS n FROM wallets').get() as { n: number }).n, finish })
        reader.close()
      }),
    close: async () => undefined,
  }
  return { log, started }
}

describe('createBackgroundCommit', () => {
  let dir: string
  let path: string
  let handle: DatabaseHandle
  let sqlite: SQLite.Database
  let db: Kysely<Database>
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'background-commit-'))
    path = join(dir, 'gateway.sqlite')
    handle = await createDatabase({ url: `sqlite:${path}` }) // migrated, then closed: the test opens its own connection
    await handle.close()
    sqlite = new SQLite(path)
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('synchronous = FULL')
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
  })
  afterEach(async () => {
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  it('commits without the disk sync on the event loop, then syncs the log once the rows are committed, and restores FULL', async () => {
    const { log, started } = manualSync(path)
    const { commit } = createBackgroundCommit({ db, sqlite, path, synchronous: 'full', syncLog: log })
    let levelInside: unknown
    let resolved = false
    const done = commit(async (trx) => {
      levelInside = sqlite.pragma('synchronous', { simple: true })
      await trx.insertInto('wallets').values(wallet(1)).execute()
    }).then(() => (resolved = true))
    await new Promise((r) => setTimeout(r, 20))
    expect(levelInside).toBe(1) // NORMAL: the commit does not fsync
    expect(sqlite.pragma('synchronous', { simple: true })).toBe(2) // FULL again for every other write
    expect(started.map((s) => s.rows)).toEqual([1]) // the sync began after the row was committed
    expect(resolved).toBe(false) // durable only once the log is synced
    started[0]!.finish()
    await done
    expect(resolved).toBe(true)
  })

  it('a commit made while a sync is in flight waits for one more that begins after it (one for all made meanwhile)', async () => {
    const { log, started } = manualSync(path)
    const { commit } = createBackgroundCommit({ db, sqlite, path, synchronous: 'full', syncLog: log })
    const first = commit((trx) => trx.insertInto('wallets').values(wallet(1)).execute())
    await new Promise((r) => setTimeout(r, 10))
    let laterDone = 0
    const later = [2, 3].map((n) => commit((trx) => trx.insertInto('wallets').values(wallet(n)).execute()).then(() => laterDone++))
    await new Promise((r) => setTimeout(r, 10))
    expect(started.map((s) => s.rows)).toEqual([1]) // the in-flight sync may have missed rows 2 and 3
    started[0]!.finish()
    await first
    await new Promise((r) => setTimeout(r, 10))
    expect(laterDone).toBe(0)
    expect(started.map((s) => s.rows)).toEqual([1, 3]) // one more sync, after both
    started[1]!.finish()
    await Promise.all(later)
    expect(laterDone).toBe(2)
  })

  it('a write that fails rejects, is not synced, and leaves the level FULL', async () => {
    let syncs = 0
    const { commit } = createBackgroundCommit({ db, sqlite, path, synchronous: 'full', syncLog: { sync: async () => void syncs++, close: async () => undefined } })
    await commit((trx) => trx.insertInto('wallets').values(wallet(1)).execute())
    await expect(
      commit(async (trx) => {
        await trx.insertInto('wallets').values(wallet(2)).execute()
        throw new Error('the caller failed after its first statement')
      }),
    ).rejects.toThrow('the caller failed')
    await expect(commit((trx) => trx.insertInto('wallets').values(wallet(1)).execute())).rejects.toThrow(/UNIQUE/)
    expect(sqlite.pragma('synchronous', { simple: true })).toBe(2)
    expect(syncs).toBe(1) // only the commit that succeeded is synced
  })

  it('syncs the real write-ahead log (fdatasync on the threadpool) and closes it', async () => {
    const { commit, close } = createBackgroundCommit({ db, sqlite, path, synchronous: 'full' })
    await commit((trx) => trx.insertInto('wallets').values(wallet(7)).execute())
    await commit((trx) => trx.insertInto('wallets').values(wallet(8)).execute())
    await close()
    const reader = new SQLite(path, { readonly: true })
    expect((reader.prepare('SELECT count(*) AS n FROM wallets').get() as { n: number }).n).toBe(2)
    reader.close()
  })

  it('a grouped write shares the next commit\'s sync (no sync of its own) and resolves only once that sync is done', async () => {
    const { log, started } = manualSync(path)
    const { commit, groupCommit } = createBackgroundCommit({ db, sqlite, path, synchronous: 'full', syncLog: log, groupDelayMs: 60_000 })
    let grouped = false
    const record = groupCommit((trx) => trx.insertInto('wallets').values(wallet(1)).execute()).then(() => (grouped = true))
    await new Promise((r) => setTimeout(r, 20))
    expect(started).toEqual([]) // no sync yet: it waits for another commit's
    expect(grouped).toBe(false) // and is not reported durable before one
    const unit = commit((trx) => trx.insertInto('wallets').values(wallet(2)).execute())
    await new Promise((r) => setTimeout(r, 20))
    expect(started.map((s) => s.rows)).toEqual([2]) // one sync, begun after both rows
    expect(grouped).toBe(false)
    started[0]!.finish()
    await Promise.all([unit, record])
    expect(grouped).toBe(true)
    expect(started).toHaveLength(1)
  })

  it('a grouped write made while a sync is in flight waits for the next one; alone, it is synced after the delay', async () => {
    const { log, started } = manualSync(path)
    const { commit, groupCommit } = createBackgroundCommit({ db, sqlite, path, synchronous: 'full', syncLog: log, groupDelayMs: 30 })
    const unit = commit((trx) => trx.insertInto('wallets').values(wallet(1)).execute())
    await new Promise((r) => setTimeout(r, 10))
    let grouped = false
    const record = groupCommit((trx) => trx.insertInto('wallets').values(wallet(2)).execute()).then(() => (grouped = true))
    await new Promise((r) => setTimeout(r, 10))
    started[0]!.finish() // began before row 2: does not cover it
    await unit
    await new Promise((r) => setTimeout(r, 5))
    expect(grouped).toBe(false)
    await new Promise((r) => setTimeout(r, 80)) // no other commit: its own sync after the delay
    expect(started.map((s) => s.rows)).toEqual([1, 2])
    expect(grouped).toBe(false)
    started[1]!.finish()
    await record
    expect(grouped).toBe(true)
  })

  it('close syncs the grouped writes still waiting', async () => {
    const { log, started } = manualSync(path)
    const { groupCommit, close } = createBackgroundCommit({ db, sqlite, path, synchronous: 'full', syncLog: log, groupDelayMs: 60_000 })
    const record = groupCommit((trx) => trx.insertInto('wallets').values(wallet(1)).execute())
    await new Promise((r) => setTimeout(r, 10))
    const closed = close()
    await new Promise((r) => setTimeout(r, 10))
    expect(started.map((s) => s.rows)).toEqual([1])
    started[0]!.finish()
    await Promise.all([record, closed])
  })

  it('with synchronous=normal, or in memory, the write just runs: no level change, no sync', async () => {
    for (const options of [{ synchronous: 'normal' as const, path }, { synchronous: 'full' as const, path: ':memory:' }]) {
      const { log, started } = manualSync(path)
      const { commit } = createBackgroundCommit({ db, sqlite, ...options, syncLog: log })
      let levelInside: unknown
      await commit(async () => {
        levelInside = sqlite.pragma('synchronous', { simple: true })
      })
      expect(levelInside).toBe(2)
      expect(started).toEqual([])
    }
  })
})
