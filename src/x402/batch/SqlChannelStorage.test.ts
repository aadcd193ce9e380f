import type { Channel } from '@x402/evm/batch-settlement/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../../tests/support/testDatabase.js'
import { SqlChannelStorage } from './SqlChannelStorage.js'
import { channelRecord } from '../../../tests/support/batchChannel.js'

const channelId = (n: number) => `0x${n.toString(16).padStart(64, '0')}`

const channel = (id: string, charged = '0'): Channel => channelRecord({ channelId: id, charged })

describe.each(dialects)('batch-settlement channels on %s', (dialect) => {
  let db: TestDatabase
  let other: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase(dialect)
    // a second handle on the same database: another gateway instance
    other = { ...(await (await import('../../../src/db/createDatabase.js')).createDatabase({ url: db.url })), url: db.url }
  })
  afterAll(async () => {
    await other?.close()
    await db?.close()
  })

  it('keeps a channel across handles and lists only its network', async () => {
    const base = new SqlChannelStorage(db.db, 'eip155:8453')
    const mainnet = new SqlChannelStorage(db.db, 'eip155:1')
    await base.updateChannel(channelId(1), () => channel(channelId(1), '5'))
    await mainnet.updateChannel(channelId(2), () => channel(channelId(2), '7'))
    expect((await new SqlChannelStorage(other.db, 'eip155:8453').get(channelId(1)))?.chargedCumulativeAmount).toBe('5')
    expect((await base.list()).map((c) => c.channelId)).toEqual([channelId(1)])
    expect(await base.get(channelId(2))).toBeUndefined()
    expect((await base.unclaimed()).map((c) => c.channelId)).toEqual([channelId(1)])
  })

  it('loses no change when two instances change one channel at once (compare and set on the version)', async () => {
    const id = channelId(10)
    const a = new SqlChannelStorage(db.db, 'eip155:8453')
    const b = new SqlChannelStorage(other.db, 'eip155:8453')
    await a.updateChannel(id, () => channel(id, '0'))
    const step = (s: SqlChannelStorage) =>
      s.updateChannel(id, (current) => (current ? { ...current, chargedCumulativeAmount: (BigInt(current.chargedCumulativeAmount) + 3n).toString() } : current))
    await Promise.all(Array.from({ length: 20 }, (_, i) => step(i % 2 === 0 ? a : b)))
    expect((await a.get(id))?.chargedCumulativeAmount).toBe('60')
  })

  it('creates a channel once when two instances open it at the same time', async () => {
    const id = channelId(11)
    const a = new SqlChannelStorage(db.db, 'eip155:8453')
    const b = new SqlChannelStorage(other.db, 'eip155:8453')
    let created = 0
    const open = (s: SqlChannelStorage) =>
      s.updateChannel(id, (current) => {
        if (current) return current
        created++
        return channel(id, '1')
      })
    const results = await Promise.all([open(a), open(b), open(a), open(b)])
    expect(results.filter((r) => r.status === 'updated')).toHaveLength(1)
    expect(created).toBeGreaterThanOrEqual(1)
  })

  it('deletes only the state it read', async () => {
    const id = channelId(12)
    const s = new SqlChannelStorage(db.db, 'eip155:8453')
    await s.updateChannel(id, () => channel(id, '1'))
    expect((await s.updateChannel(id, () => undefined)).status).toBe('deleted')
    expect(await s.get(id)).toBeUndefined()
    expect((await s.updateChannel(id, () => undefined)).status).toBe('unchanged')
  })
})
