import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import { precompiledQuery } from '../db/precompiledQuery.js'
import { BaseError } from '../shared/errors/BaseError.js'

export class QuotaExceededError extends BaseError<'quota_exceeded'> {
  override name = 'QuotaExceededError'
}

export type QuotaState = { limit: number; used: number; resets_at: number }

/**
 * Calls of cost endpoints per wallet per UTC day (seed 000 §4.2: "402 after quota"). One statement both
 * checks and counts — `INSERT … ON CONFLICT DO UPDATE SET calls = calls + 1 WHERE calls < limit RETURNING` —
 * so concurrent calls can never exceed the limit.
 */
export class CostQuota {
  /** Wallet (lower case) → the UTC day this instance saw its quota used up; see `likelyAvailable`. */
  readonly #usedUp = new Map<string, string>()

  /** The counting statement, compiled once (it runs on every cost call; building it is most of its CPU). */
  readonly #count: (wallet: string, day: string) => Promise<{ calls: number | string | bigint }[]>

  constructor(
    private readonly db: Kysely<Database>,
    private readonly limit: number,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
  ) {
    this.#count = precompiledQuery(db, 2, (q, wallet, day) =>
      q
        .insertInto('cost_usage')
        .values({ wallet: wallet!, day: day!, calls: 1 })
        .onConflict((oc) =>
          oc
            .columns(['wallet', 'day'])
            .doUpdateSet((eb) => ({ calls: eb('cost_usage.calls', '+', 1) }))
            .where('cost_usage.calls', '<', limit),
        )
        .returning('calls'),
    )
  }

  private day(): { day: string; resetsAt: number } {
    const now = this.now()
    const dayStart = now - (now % 86_400)
    return { day: new Date(dayStart * 1000).toISOString().slice(0, 10), resetsAt: dayStart + 86_400 }
  }

  /** Counts one call; throws `quota_exceeded` (with the quota in `meta`) when the day's calls are used up. */
  async consume(wallet: string): Promise<QuotaState> {
    const { day, resetsAt } = this.day()
    const key = wallet.toLowerCase()
    const row = this.limit > 0 ? (await this.#count(key, day))[0] : undefined
    if (!row) {
      this.#markUsedUp(key, day)
      throw new QuotaExceededError('quota_exceeded', `daily quota of ${this.limit} cost calls used up; it resets at ${new Date(resetsAt * 1000).toISOString()}`, {
        meta: { limit: this.limit, used: this.limit, window_s: 86_400, resets_at: resetsAt },
      })
    }
    const used = Number(row.calls)
    if (used >= this.limit) this.#markUsedUp(key, day)
    return { limit: this.limit, used, resets_at: resetsAt }
  }

  /**
   * Whether a `consume` of `wallet` will probably succeed: not once this instance saw the day's quota used up
   * (by its own last unit or a refused call) — until a refund here or the next day. Only a hint (`consume`
   * decides; another instance's refund is not seen): it keeps a wallet past its quota from having a model
   * call started ahead of its quota unit (`meterCostCall`), which the model server would work on for nothing.
   */
  likelyAvailable(wallet: string): boolean {
    if (this.limit <= 0) return false
    const key = wallet.toLowerCase()
    const day = this.#usedUp.get(key)
    if (day === undefined) return true
    if (day === this.day().day) return false
    this.#usedUp.delete(key)
    return true
  }

  #markUsedUp(key: string, day: string): void {
    // Bounded: past this many wallets the hint starts over (at worst some calls get a head start again).
    if (this.#usedUp.size >= 10_000) this.#usedUp.clear()
    this.#usedUp.set(key, day)
  }

  /** Today's quota of `wallet`, without counting a call (the journal). */
  async state(wallet: string): Promise<QuotaState> {
    const { day, resetsAt } = this.day()
    const row = await this.db.selectFrom('cost_usage').select('calls').where('wallet', '=', wallet.toLowerCase()).where('day', '=', day).executeTakeFirst()
    return { limit: this.limit, used: Math.min(Number(row?.calls ?? 0), this.limit), resets_at: resetsAt }
  }

  /** Calls per UTC day of `wallet`, newest day first. */
  async history(wallet: string, days: number): Promise<{ day: string; calls: number }[]> {
    const rows = await this.db.selectFrom('cost_usage').select(['day', 'calls']).where('wallet', '=', wallet.toLowerCase()).orderBy('day', 'desc').limit(days).execute()
    return rows.map((r) => ({ day: r.day, calls: Number(r.calls) }))
  }

  /** Gives back one call of today (the call failed before doing any work: a model-server error, say). */
  async refund(wallet: string): Promise<void> {
    const { day } = this.day()
    this.#usedUp.delete(wallet.toLowerCase())
    await this.db
      .updateTable('cost_usage')
      .set((eb) => ({ calls: eb('calls', '-', 1) }))
      .where('wallet', '=', wallet.toLowerCase())
      .where('day', '=', day)
      .where('calls', '>', 0)
      .execute()
  }
}
