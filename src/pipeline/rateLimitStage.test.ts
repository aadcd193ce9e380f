import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listen } from '../../tests/support/listen.js'
import { gatewayCatalogue } from '../handlers/plugins.js'
import type { UnroutedResult } from '../shared/http/index.js'
import { MemoryRateLimitStore, type RateLimitHit, type RateLimitStore } from './MemoryRateLimitStore.js'
import { createRateLimiter, rateLimitStage } from './rateLimitStage.js'

async function serve(store?: RateLimitStore): Promise<{ server: Listening; sent: UnroutedResult[] }> {
  const sent: UnroutedResult[] = []
  const app = express()
  app.use(
    rateLimitStage({
      windowS: 60,
      max: 2,
      store,
    }),
  )
  app.use((_req, res) => void res.json({ ok: true }))
  // its refusal rendered as the app does: through the gateway's catalogue
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const result = gatewayCatalogue.toResult(error)!
    sent.push(result)
    res.statusCode = result.status
    for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v as string)
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(result.body))
  })
  return { server: await listen(app), sent }
}

describe('rateLimitStage', () => {
  let memory: Awaited<ReturnType<typeof serve>>
  beforeAll(async () => {
    memory = await serve()
  })
  afterAll(() => memory.server.close())

  it('lets the limit through, then answers 429 with Retry-After in the Error shape', async () => {
    const statuses: number[] = []
    const responses: Response[] = []
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${memory.server.url}/health`)
      statuses.push(res.status)
      responses.push(res)
    }
    expect(statuses).toEqual([200, 200, 429, 429])
    expect(responses[0]!.headers.get('ratelimit-policy')).toBe('2;w=60')
    expect(responses[0]!.headers.get('ratelimit')).toMatch(/^limit=2, remaining=1, reset=(59|60)$/)
    const last = responses[3]!
    const retryAfter = Number(last.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(last.headers.get('ratelimit')).toBe(`limit=2, remaining=0, reset=${retryAfter}`)
    expect(await last.json()).toEqual({
      error: 'rate_limited',
      message: `too many requests; retry after ${retryAfter} s`,
      details: { retry_after_s: retryAfter },
    })
    expect(memory.sent.at(-1)?.component).toBe('Error')
  })

  it('works with a store that answers asynchronously (a shared store)', async () => {
    const counts = new Map<string, number>()
    const shared: RateLimitStore = {
      hit: async (key, windowMs, nowMs): Promise<RateLimitHit> => {
        counts.set(key, (counts.get(key) ?? 0) + 1)
        return { count: counts.get(key)!, resetAtMs: nowMs + windowMs }
      },
    }
    const { server } = await serve(shared)
    try {
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((await fetch(`${server.url}/x`)).status)
      expect(statuses).toEqual([200, 200, 429])
      expect([...counts.values()]).toEqual([3])
    } finally {
      await server.close()
    }
  })
})

describe('createRateLimiter (what one request carries several of: the tool calls of one /mcp POST)', () => {
  it('counts each take in the same windows as the stage, also when many are taken at once', async () => {
    const store = new MemoryRateLimitStore()
    const now = () => 1_000_000
    store.hit('10.0.0.1', 60_000, now()) // the request itself, counted by the stage
    const limiter = createRateLimiter({ windowS: 60, max: 3, store, now })
    const verdicts = await Promise.all([1, 2, 3, 4].map(() => limiter.take('10.0.0.1')))
    expect(verdicts.map((v) => v.allowed)).toEqual([true, true, false, false])
    expect(verdicts[2]!.retryAfterS).toBe(60)
    expect((await limiter.take('10.0.0.2')).allowed).toBe(true) // another address has its own count
  })

  it('lets the call through when a shared store fails (the limit is a guard, not a gate)', async () => {
    const failing: RateLimitStore = { hit: () => Promise.reject(new Error('redis down')) }
    expect(await createRateLimiter({ windowS: 60, max: 1, store: failing }).take('10.0.0.1')).toEqual({ allowed: true, retryAfterS: 0 })
  })
})
