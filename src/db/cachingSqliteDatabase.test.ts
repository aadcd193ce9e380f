import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { describe, expect, it } from 'vitest'
import { cachingSqliteDatabase } from './cachingSqliteDatabase.js'

describe('cachingSqliteDatabase', () => {
  it('prepares each SQL text once and hands back the same statement', () => {
    const raw = new SQLite(':memory:')
    let prepared = 0
    const counting = Object.assign(Object.create(raw) as SQLite.Database, {
      prepare: (text: string) => {
        prepared++
        return raw.prepare(text)
      },
    })
    const db = cachingSqliteDatabase(counting)
    const a = db.prepare('select 1 as x')
    expect(db.prepare('select 1 as x')).toBe(a)
    db.prepare('select 2 as x')
    expect(prepared).toBe(2)
    raw.close()
  })

  it('keeps at most `max` statements, dropping the least recently used', () => {
    const raw = new SQLite(':memory:')
    const db = cachingSqliteDatabase(raw, { max: 2 })
    const one = db.prepare('select 1')
    const two = db.prepare('select 2')
    expect(db.prepare('select 1')).toBe(one) // 1 is now the most recent
    db.prepare('select 3') // evicts 2
    expect(db.prepare('select 1')).toBe(one)
    expect(db.prepare('select 2')).not.toBe(two)
    raw.close()
  })

  it('under kysely: reused statements return fresh results, across writes and a schema change', async () => {
    const db = new Kysely<{ t: { id: number; v: string } }>({ dialect: new SqliteDialect({ database: cachingSqliteDatabase(new SQLite(':memory:')) }) })
    await db.schema.createTable('t').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('v', 'text').execute()
    const read = (id: number) => db.selectFrom('t').selectAll().where('id', '=', id).executeTakeFirst()
    for (let i = 1; i <= 3; i++) await db.insertInto('t').values({ id: i, v: `v${i}` }).execute()
    expect(await read(2)).toEqual({ id: 2, v: 'v2' })
    await db.updateTable('t').set({ v: 'changed' }).where('id', '=', 2).execute()
    expect(await read(2)).toEqual({ id: 2, v: 'changed' })
    await sql`alter table t add column w text default 'w'`.execute(db)
    expect(await read(2)).toEqual({ id: 2, v: 'changed', w: 'w' })
    // Streaming holds the connection: another query waits and then reuses the same statement safely.
    const streamed: unknown[] = []
    for await (const row of db.selectFrom('t').select('id').where('id', '>', 0).stream()) {
      streamed.push(row)
    }
    expect(streamed).toHaveLength(3)
    await db.destroy()
  })
})
