/**
 * The rate limit shared through Redis. Two replicas of the whole gateway (each its own data
 * directory and its own SQLite database, so Redis is the only thing they share) on one Redis key prefix: the
 * limit is one limit for both. With Redis down the replicas count in the database (the fallback); two
 * replicas on one PostgreSQL database then still agree. Every response is checked against the document
 * (`startTestGateway` validates in `error` mode).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedisServer, sharedRedisUrl, type TestRedis } from '../support/startRedisServer.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'

const MAX = 6

async function statuses(gateways: TestGateway[], n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push((await fetch(`${gateways[i % gateways.length]!.url}/login`)).status)
  return out
}

describe('rate limit in Redis: two replicas share one limit', () => {
  const gateways: TestGateway[] = []
  beforeAll(async () => {
    const env = { SERVICE_RATE_LIMIT__REDIS_URL: sharedRedisUrl, SERVICE_RATE_LIMIT__REDIS_PREFIX: `test:rl:${randomBytes(6).toString('hex')}:`, SERVICE_RATE_LIMIT__MAX: String(MAX) }
    gateways.push(await startTestGateway({ env }), await startTestGateway({ env }))
  })
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.close()))
  })

  it('counts the requests of one address through either replica: the limit is reached after MAX in all, then 429 on both', async () => {
    const got = await statuses(gateways, MAX + 2)
    expect(got).toEqual([...Array(MAX).fill(200), 429, 429])
    const last = await fetch(`${gateways[1]!.url}/login`)
    expect(last.status).toBe(429)
    expect(last.headers.get('ratelimit')).toMatch(/^limit=6, remaining=0, reset=\d+$/)
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(((await last.json()) as { error: string }).error).toBe('rate_limited')
    for (const g of gateways) expect(g.validationErrors).toEqual([])
  })
})

describe('rate limit with Redis down: the replicas count in their PostgreSQL database (fail to the database, not open)', () => {
  let redis: TestRedis
  const gateways: TestGateway[] = []
  beforeAll(async () => {
    redis = await startRedisServer()
    const env = { SERVICE_RATE_LIMIT__REDIS_URL: redis.url, SERVICE_RATE_LIMIT__REDIS_PREFIX: 'test:rl:', SERVICE_RATE_LIMIT__MAX: String(MAX), SERVICE_RATE_LIMIT__REDIS_TIMEOUT_MS: '200' }
    const first = await startTestGateway({ dialect: 'postgres', env })
    gateways.push(first, await startTestGateway({ databaseUrl: first.databaseUrl, env }))
  })
  afterAll(async () => {
    for (const g of gateways.reverse()) await g.close() // the first owns the database: closed last
    await redis?.close()
  })

  it('Redis killed: the limit still holds across both replicas, counted in the database; Redis back: counted in Redis again', async () => {
    expect(await statuses(gateways, 2)).toEqual([200, 200]) // in Redis
    await redis.stop()
    // a fresh window in the database: MAX more, then 429 through either replica
    expect(await statuses(gateways, MAX + 2)).toEqual([...Array(MAX).fill(200), 429, 429])
    const rows = await gateways[0]!.database.db.selectFrom('rate_limit_counters').select(['count']).execute()
    expect(rows.map((r) => Number(r.count))).toEqual([MAX + 2])
    for (const g of gateways) expect(g.logText()).toContain('rate limit: Redis failed; counting in the database')
    await redis.start()
    // Redis restarted empty: counting starts again there (the clients reconnect within ~2 s)
    const deadline = Date.now() + 15_000
    let back = false
    while (!back && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300))
      back = (await fetch(`${gateways[0]!.url}/login`)).status === 200
    }
    expect(back).toBe(true)
    expect(gateways[0]!.logText()).toContain('rate limit: Redis is back; counting in Redis')
    for (const g of gateways) expect(g.validationErrors).toEqual([])
  })
})
