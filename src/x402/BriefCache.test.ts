import { describe, expect, it } from 'vitest'
import { BriefCache } from './BriefCache.js'

describe('BriefCache', () => {
  it('reuses an answer for its time, shares one read between concurrent asks, keeps no failure, stays bounded', async () => {
    let t = 0
    let reads = 0
    const cache = new BriefCache<number>(1000, 2, () => t)
    const read = async () => ++reads
    expect(await Promise.all([cache.get('a', read), cache.get('a', read)])).toEqual([1, 1])
    t = 999
    expect(await cache.get('a', read)).toBe(1)
    t = 1000
    expect(await cache.get('a', read)).toBe(2)
    await expect(cache.get('b', () => Promise.reject(new Error('down')))).rejects.toThrow('down')
    expect(await cache.get('b', read)).toBe(3)
    await cache.get('c', read)
    await cache.get('d', read) // past two entries the oldest goes
    expect(await cache.get('a', read)).toBe(6)
  })
})
