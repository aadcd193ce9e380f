import { describe, expect, it } from 'vitest'
import { MemoryRateLimitStore } from './MemoryRateLimitStore.js'

const W = 60_000

describe('MemoryRateLimitStore', () => {
  it('counts per key within a window that starts at the key\'s first request', () => {
    const store = new MemoryRateLimitStore()
    expect(store.hit('a', W, 1_000)).toEqual({ count: 1, resetAtMs: 61_000 })
    expect(store.hit('a', W, 30_000)).toEqual({ count: 2, resetAtMs: 61_000 })
    expect(store.hit('b', W, 30_000)).toEqual({ count: 1, resetAtMs: 90_000 })
    expect(store.hit('a', W, 60_999)).toEqual({ count: 3, resetAtMs: 61_000 })
  })

  it('starts a new window once the old one is over', () => {
    const store = new MemoryRateLimitStore()
    store.hit('a', W, 0)
    store.hit('a', W, 10)
    expect(store.hit('a', W, 60_000)).toEqual({ count: 1, resetAtMs: 120_000 })
  })

  it('carries a key whose window is still open across a rotation (no reset at a generation boundary)', () => {
    const store = new MemoryRateLimitStore()
    store.hit('x', W, 0) // rotation due at 60 000
    store.hit('a', W, 59_000) // window until 119 000
    expect(store.hit('a', W, 61_000)).toEqual({ count: 2, resetAtMs: 119_000 }) // rotated; carried over
    expect(store.hit('a', W, 118_000)).toEqual({ count: 3, resetAtMs: 119_000 })
  })

  it('forgets idle keys after two windows: memory is the addresses of the last two windows', () => {
    const store = new MemoryRateLimitStore()
    for (let i = 0; i < 1000; i++) store.hit(`k${i}`, W, i)
    expect(store.size).toBe(1000)
    store.hit('late', W, 70_000) // first rotation: the 1000 keys are the previous generation
    expect(store.size).toBe(1001)
    store.hit('later', W, 140_000) // second rotation: they are dropped
    expect(store.size).toBe(2)
    expect(store.hit('k1', W, 140_001)).toEqual({ count: 1, resetAtMs: 200_001 })
  })

  it('after a long idle gap both generations are dropped at once', () => {
    const store = new MemoryRateLimitStore()
    store.hit('a', W, 0)
    store.hit('b', W, 10 * W)
    expect(store.size).toBe(1)
  })
})
