import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sharedRedisUrl, startRedisServer, type TestRedis } from '../../tests/support/startRedisServer.js'
import { FallbackRateLimitStore } from './FallbackRateLimitStore.js'
import { MemoryRateLimitStore } from './MemoryRateLimitStore.js'
import { RedisRateLimitStore } from './RedisRateLimitStore.js'

const prefix = () => `test:rl:${randomBytes(6).toString('hex')}:`

describe('RedisRateLimitStore', () => {
  it('counts one address across replicas (two clients, one prefix), concurrently, in one window', async () => {
    const p = prefix()
    const a = new RedisRateLimitStore({ url: sharedRedisUrl, prefix: p, commandTimeoutMs: 1000 })
    const b = new RedisRateLimitStore({ url: sharedRedisUrl, prefix: p, commandTimeoutMs: 1000 })
    const other = new RedisRateLimitStore({ url: sharedRedisUrl, prefix: prefix(), commandTimeoutMs: 1000 })
    try {
      expect(await Promise.all([a.ready(5000), b.ready(5000), other.ready(5000)])).toEqual([true, true, true])
      const before = Date.now()
      const hits = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).hit('1.2.3.4', 60_000)))
      expect(hits.map((h) => h.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
      for (const h of hits) {
        expect(h.resetAtMs).toBeGreaterThan(before + 50_000)
        expect(h.resetAtMs).toBeLessThanOrEqual(Date.now() + 60_000)
      }
      expect((await a.hit('5.6.7.8', 60_000)).count).toBe(1) // another address
      expect((await other.hit('1.2.3.4', 60_000)).count).toBe(1) // another prefix (another deployment, another test)
    } finally {
      await Promise.all([a.close(), b.close(), other.close()])
    }
  })

  it('opens a new window when one ends (Redis expires the counter)', async () => {
    const store = new RedisRateLimitStore({ url: sharedRedisUrl, prefix: prefix(), commandTimeoutMs: 1000 })
    try {
      await store.ready(5000)
      expect((await store.hit('k', 300)).count).toBe(1)
      expect((await store.hit('k', 300)).count).toBe(2)
      await new Promise((r) => setTimeout(r, 400))
      expect((await store.hit('k', 300)).count).toBe(1)
    } finally {
      await store.close()
    }
  })

  describe('Redis down', () => {
    let redis: TestRedis
    beforeAll(async () => {
      redis = await startRedisServer()
    })
    afterAll(() => redis?.close())

    it('fails a hit at once while Redis is down (no queueing), and counts again when it is back (scripts loaded again)', async () => {
      const store = new RedisRateLimitStore({ url: redis.url, prefix: prefix(), commandTimeoutMs: 200 })
      try {
        expect(await store.ready(5000)).toBe(true)
        expect((await store.hit('k', 60_000)).count).toBe(1)
        await redis.stop()
        const t0 = Date.now()
        await expect(store.hit('k', 60_000)).rejects.toThrow()
        // a 200 ms command timeout; 5 s allows a stalled event loop beside the suite (queued, it would wait for Redis)
        expect(Date.now() - t0).toBeLessThan(5_000)
        // Redis restarted empty (it keeps nothing on disk): the scripts it had loaded are gone too
        await redis.start()
        expect(await store.ready(10_000)).toBe(true)
        expect((await store.hit('k', 60_000)).count).toBe(1)
        expect((await store.hit('k', 60_000)).count).toBe(2)
      } finally {
        await store.close()
      }
    })

    it('a store made while Redis is down counts once Redis comes up (rate-limit-redis alone would keep failing on its first script load)', async () => {
      await redis.stop()
      const store = new RedisRateLimitStore({ url: redis.url, prefix: prefix(), commandTimeoutMs: 200 })
      try {
        expect(await store.ready(300)).toBe(false)
        await expect(store.hit('k', 60_000)).rejects.toThrow()
        await redis.start()
        expect(await store.ready(10_000)).toBe(true)
        expect((await store.hit('k', 60_000)).count).toBe(1)
      } finally {
        await store.close()
      }
    })

    it('behind FallbackRateLimitStore: Redis down → the fallback counts; Redis back → Redis counts; each switch reported once', async () => {
      const switches: boolean[] = []
      const fallback = new MemoryRateLimitStore()
      const primary = new RedisRateLimitStore({ url: redis.url, prefix: prefix(), commandTimeoutMs: 200 })
      const store = new FallbackRateLimitStore(primary, fallback, ({ fallback: f }) => switches.push(f))
      try {
        await primary.ready(5000)
        expect((await store.hit('k', 60_000, Date.now())).count).toBe(1)
        await redis.stop()
        expect((await store.hit('k', 60_000, Date.now())).count).toBe(1) // the fallback's first
        expect((await store.hit('k', 60_000, Date.now())).count).toBe(2)
        expect(store.usingFallback).toBe(true)
        await redis.start()
        await primary.ready(10_000)
        expect((await store.hit('k', 60_000, Date.now())).count).toBe(1) // Redis restarted empty
        expect(store.usingFallback).toBe(false)
        expect(switches).toEqual([true, false])
      } finally {
        await primary.close()
      }
    })
  })
})
