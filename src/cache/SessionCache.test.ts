import { describe, expect, it } from 'vitest'
import { manualChangeFeed as manualFeed } from '../../tests/support/manualChangeFeed.js'
import { SessionCache } from './SessionCache.js'

const alice = { wallet: '0xA11cE00000000000000000000000000000000000', expires_at: 2_000 }

describe('SessionCache', () => {
  it('answers a stored session from memory until its row changes', () => {
    const feed = manualFeed()
    const events: string[] = []
    const cache = new SessionCache({ feed, onEvent: (e) => events.push(e) })
    expect(cache.get('h1')).toBeUndefined()
    cache.store('h1', alice, cache.epoch())
    expect(cache.get('h1')).toEqual(alice)
    feed.emit({ kind: 'row', table: 'agent_revisions', key: 'h1' })
    expect(cache.get('h1')).toEqual(alice)
    feed.emit({ kind: 'row', table: 'sessions', key: 'other' })
    expect(cache.get('h1')).toEqual(alice)
    feed.emit({ kind: 'row', table: 'sessions', key: 'h1' })
    expect(cache.get('h1')).toBeUndefined()
    expect(events).toEqual(['miss', 'hit', 'hit', 'invalidation', 'hit', 'invalidation', 'miss'])
  })

  it('drops everything on a table-wide or an `all` change', () => {
    const feed = manualFeed()
    const cache = new SessionCache({ feed })
    cache.store('h1', alice, cache.epoch())
    feed.emit({ kind: 'row', table: 'sessions', key: '*' })
    expect(cache.get('h1')).toBeUndefined()
    cache.store('h1', alice, cache.epoch())
    feed.emit({ kind: 'all', reason: 'test' })
    expect(cache.size).toBe(0)
  })

  it('answers nothing and keeps nothing while the feed is not live', () => {
    const feed = manualFeed()
    const cache = new SessionCache({ feed })
    cache.store('h1', alice, cache.epoch())
    feed.isLive = false
    expect(cache.get('h1')).toBeUndefined()
    cache.store('h2', alice, cache.epoch())
    feed.isLive = true
    expect(cache.get('h2')).toBeUndefined()
  })

  it('does not keep a read during which anything was invalidated (race guard)', () => {
    const feed = manualFeed()
    const cache = new SessionCache({ feed })
    const epoch = cache.epoch() // the lookup starts …
    cache.invalidate('h1') // … a revocation lands while it is in flight …
    cache.store('h1', alice, epoch) // … and its (stale) answer arrives
    expect(cache.get('h1')).toBeUndefined()
    cache.store('h1', alice, cache.epoch())
    expect(cache.get('h1')).toEqual(alice)
  })

  it('does not keep a read when checking the feed reports a change (SQLite data_version)', () => {
    const feed = manualFeed()
    const live = feed.live
    const cache = new SessionCache({ feed })
    const epoch = cache.epoch()
    feed.live = () => (feed.emit({ kind: 'all', reason: 'another connection committed' }), live())
    cache.store('h1', alice, epoch)
    feed.live = live
    expect(cache.get('h1')).toBeUndefined()
  })

  it('keeps at most `max` sessions, dropping the oldest', () => {
    const feed = manualFeed()
    const cache = new SessionCache({ feed, max: 2 })
    for (const h of ['h1', 'h2', 'h3']) cache.store(h, alice, cache.epoch())
    expect(cache.size).toBe(2)
    expect(cache.get('h1')).toBeUndefined()
    expect(cache.get('h3')).toEqual(alice)
  })

  it('stops following the feed once closed', () => {
    const feed = manualFeed()
    const cache = new SessionCache({ feed })
    cache.store('h1', alice, cache.epoch())
    cache.close()
    expect(feed.listeners.size).toBe(0)
    expect(cache.get('h1')).toBeUndefined()
  })
})
