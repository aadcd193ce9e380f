import { describe, expect, it } from 'vitest'
import { manualChangeFeed as manualFeed } from '../../tests/support/manualChangeFeed.js'
import { CachedTable } from './CachedTable.js'

describe('CachedTable', () => {
  it('reads once and again only after a change to its table', async () => {
    const feed = manualFeed()
    let reads = 0
    const table = new CachedTable({ feed, table: 'agent_revisions', load: async () => ++reads })
    expect(await table.get()).toBe(1)
    expect(await table.get()).toBe(1)
    feed.emit({ kind: 'row', table: 'sessions', key: 'x' })
    expect(await table.get()).toBe(1)
    feed.emit({ kind: 'row', table: 'agent_revisions', key: 'ceo' })
    expect(await table.get()).toBe(2)
    feed.emit({ kind: 'all', reason: 'test' })
    expect(await table.get()).toBe(3)
    table.invalidate()
    expect(await table.get()).toBe(4)
  })

  it('reads the database on every call while the feed is not live', async () => {
    const feed = manualFeed()
    let reads = 0
    const table = new CachedTable({ feed, table: 't', load: async () => ++reads })
    feed.isLive = false
    expect([await table.get(), await table.get()]).toEqual([1, 2])
    feed.isLive = true
    expect([await table.get(), await table.get()]).toEqual([3, 3])
  })

  it('returns but does not keep a read during which the table changed (race guard)', async () => {
    const feed = manualFeed()
    let reads = 0
    let release!: () => void
    const table = new CachedTable({
      feed,
      table: 't',
      load: () => {
        const n = ++reads
        return n === 1 ? new Promise<number>((r) => (release = () => r(n))) : Promise.resolve(n)
      },
    })
    const first = table.get()
    await Promise.resolve()
    feed.emit({ kind: 'row', table: 't', key: 'k' }) // a change commits while the first read is in flight
    release()
    expect(await first).toBe(1)
    expect(await table.get()).toBe(2)
    expect(await table.get()).toBe(2)
  })
})
