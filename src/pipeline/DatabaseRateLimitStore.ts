import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/Database.js'
import type { RateLimitHit, RateLimitStore } from './MemoryRateLimitStore.js'

/**
 * The rate limit's counters in the gateway's database (`rate_limit_counters`), shared by every instance on
 * it (`SERVICE_RATE_LIMIT__STORE=database`): one upsert per request counts the hit and opens a new window
 * when the old one is over, atomically (PostgreSQL and SQLite ≥ 3.35 `ON CONFLICT … RETURNING`). Expired
 * rows are swept every `sweepEvery` hits, so the table holds the addresses of about one window.
 */
export class DatabaseRateLimitStore implements RateLimitStore {
  #hits = 0

  constructor(
    private readonly db: Kysely<Database>,
    private readonly sweepEvery = 1_000,
  ) {}

  async hit(key: string, windowMs: number, nowMs: number): Promise<RateLimitHit> {
    const resetAt = nowMs + windowMs
    const row = await this.db
      .insertInto('rate_limit_counters')
      .values({ key, count: 1, reset_at_ms: resetAt })
      .onConflict((oc) =>
        oc.column('key').doUpdateSet({
          count: sql<number>`case when rate_limit_counters.reset_at_ms <= ${nowMs} then 1 else rate_limit_counters.count + 1 end`,
          reset_at_ms: sql<number>`case when rate_limit_counters.reset_at_ms <= ${nowMs} then ${resetAt} else rate_limit_counters.reset_at_ms end`,
        }),
      )
      .returning(['count', 'reset_at_ms'])
      .executeTakeFirstOrThrow()
    if (++this.#hits % this.sweepEvery === 0) {
      void this.db.deleteFrom('rate_limit_counters').where('reset_at_ms', '<', nowMs).execute().catch(() => undefined)
    }
    return { count: Number(row.count), resetAtMs: Number(row.reset_at_ms) }
  }
}
