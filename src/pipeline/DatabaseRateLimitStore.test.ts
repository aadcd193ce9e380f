import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { DatabaseRateLimitStore } from './DatabaseRateLimitStore.js'

describe.each(dialects)('DatabaseRateLimitStore on %s', (dialect) => {
  let database: TestDatabase
  let second: DatabaseHandle
  beforeAll(async () => {
    database = await createTestDatabase(dialect)
    second = await createDatabase({ url: database.url }) // a second instance's own connection
  })
  afterAll(async () => {
    await second?.close()
    await database?.close()
  })

  it('counts one address across instances sharing the database, concurrently, and opens a new window when one ends', async () => {
    const a = new DatabaseRateLimitStore(database.db)
    const b = new DatabaseRateLimitStore(second.db)
    const t = 1_000_000
    const hits = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).hit('1.2.3.4', 60_000, t)))
    expect(hits.map((h) => h.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(new Set(hits.map((h) => h.resetAtMs))).toEqual(new Set([t + 60_000]))
    expect(await a.hit('5.6.7.8', 60_000, t)).toEqual({ count: 1, resetAtMs: t + 60_000 }) // another address
    expect(await b.hit('1.2.3.4', 60_000, t + 60_000)).toEqual({ count: 1, resetAtMs: t + 120_000 })
  })
})
