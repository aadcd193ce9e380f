import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Listening, listen } from '../../tests/support/listen.js'
import type { UnroutedResult } from '../shared/http/index.js'
import type { RateLimitHit, RateLimitStore } from './MemoryRateLimitStore.js'
import { rateLimitStage } from './rateLimitStage.js'

async function serve(store?: RateLimitStore): Promise<{ server: Listening; sent: UnroutedResult[] }> {
  const sent: UnroutedResult[] = []
  const app = express()
  app.use(
    rateLimitStage({
      windowS: 60,
      max: 2,
      store,
      matchOperation: () => undefined,
      send: async (_req, res, result) => {
        sent.push(result)
        res.statusCode = result.status
        for (const [k, v] of Object.entries(result.headers ?? {})) res.setHeader(k, v as string)
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify(result.body))
      },
    }),
  )
  app.use((_req, res) => void res.json({ ok: true }))
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
