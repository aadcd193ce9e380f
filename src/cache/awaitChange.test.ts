import { describe, expect, it } from 'vitest'
import { manualChangeFeed } from '../../tests/support/manualChangeFeed.js'
import { awaitChange } from './awaitChange.js'

const state = (p: Promise<void>) => Promise.race([p.then(() => 'settled'), new Promise((r) => setTimeout(() => r('pending'), 20))])

describe('awaitChange', () => {
  it('settles on the change it waits for (even one reported before `settled` is called), not on others', async () => {
    const feed = manualChangeFeed()
    const early = awaitChange(feed, 'sessions', 'h1')
    feed.emit({ kind: 'row', table: 'sessions', key: 'h1' })
    expect(await state(early.settled(5_000))).toBe('settled')

    const late = awaitChange(feed, 'sessions', 'h1')
    const settled = late.settled(5_000)
    feed.emit({ kind: 'row', table: 'sessions', key: 'h2' })
    feed.emit({ kind: 'row', table: 'agent_revisions', key: 'h1' })
    expect(await state(settled)).toBe('pending')
    feed.emit({ kind: 'row', table: 'sessions', key: 'h1' })
    expect(await state(settled)).toBe('settled')
    expect(feed.listeners.size).toBe(0)
  })

  it('gives up after its timeout, and does not wait at all when the feed is not live', async () => {
    const feed = manualChangeFeed()
    expect(await state(awaitChange(feed, 't', 'k').settled(5))).toBe('settled')
    feed.isLive = false
    expect(await state(awaitChange(feed, 't', 'k').settled(5_000))).toBe('settled')
    const cancelled = awaitChange(feed, 't', 'k')
    cancelled.cancel()
    expect(feed.listeners.size).toBe(0)
  })
})
