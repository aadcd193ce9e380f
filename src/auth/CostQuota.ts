import type { Kysely } from 'kysely'
import { type BackgroundCommit, directCommit } from '../db/createBackgroundCommit.js'
import type { Database } from '../db/Database.js'
import { type PrecompiledQuery, precompiledQuery } from '../db/precompiledQuery.js'
import { BaseError } from '../shared/errors/BaseError.js'

export class QuotaExceededError extends BaseError<'quota_exceeded'> {
  override name = 'QuotaExceededError'
}

export type QuotaState = { limit: number; used: number; resets_at: number }

/** Prefix of a client network's counter in `cost_usage` (a wallet's key is its `0x…` address, so they never meet). */
const NETWORK_KEY = 'net:'

/**
 * Calls of cost endpoints per wallet per UTC day (seed 000 §4.2: "402 after quota"). One statement both
 * checks and counts — `INSERT … ON CONFLICT DO UPDATE SET calls = calls + 1 WHERE calls < limit RETURNING` —
 * so concurrent calls can never exceed the limit.
 *
 * Wallets cost nothing to make, so the calls of one client network (`networkLimit` per day; see
 * `src/shared/addressRange.ts`) are counted too, in the same table under `net:<range>`: a call needs a unit of
 * both, and new wallets on one network do not buy new quota. 0 turns that count off.
 */
export class CostQuota {
  /** Wallet (lower case) → the UTC day this instance saw its quota used up; see `likelyAvailable`. */
  readonly #usedUp = new Map<string, string>()

  /** The counting statement, compiled once (it runs on every cost call; building it is most of its CPU). */
  readonly #count: PrecompiledQuery<Database, [wallet: string, day: string], { calls: number | string | bigint }>
  readonly #countNetwork: PrecompiledQuery<Database, [network: string, day: string], { calls: number | string | bigint }>

  constructor(
    private readonly db: Kysely<Database>,
    private readonly limit: number,
    private readonly now: () => number = () => Math.floor(Date.now() / 1000),
    /** Calls per client network per UTC day; 0 = not counted. */
    private readonly networkLimit = 0,
    /**
     * How a unit is committed (the database handle's `backgroundCommit`). The unit is taken while the model
     * server works on a call started ahead of it (`Meter`): a commit whose fsync holds the event loop holds
     * back that call's first bytes too, one on libuv's threadpool does not. Either way `consume` resolves only
     * once the unit is as durable as a commit of the configured level.
     */
    private readonly commit: BackgroundCommit = directCommit(db),
  ) {
    const counter = (max: number) =>
      precompiledQuery(db, 2, (q, key, day) =>
        q
          .insertInto('cost_usage')
          .values({ wallet: key!, day: day!, calls: 1 })
          .onConflict((oc) =>
            oc
              .columns(['wallet', 'day'])
              .doUpdateSet((eb) => ({ calls: eb('cost_usage.calls', '+', 1) }))
              .where('cost_usage.calls', '<', max),
          )
          .returning('calls'),
      )
    this.#count = counter(limit)
    this.#countNetwork = counter(networkLimit)
  }

  private day(): { day: string; resetsAt: number } {
    const now = this.now()
    const dayStart = now - (now % 86_400)
    return { day: new Date(dayStart * 1000).toISOString().slice(0, 10), resetsAt: dayStart + 86_400 }
  }

  /**
   * Counts one call of `wallet` (and of its client `network`, when networks are counted); throws
   * `quota_exceeded` (with the quota in `meta`) when the day's calls of either are used up.
   */
  async consume(wallet: string, network?: string): Promise<QuotaState> {
    const { day, resetsAt } = this.day()
    const key = wallet.toLowerCase()
    const walletUsedUp = () => {
      this.#markUsedUp(key, day)
      return new QuotaExceededError('quota_exceeded', `daily quota of ${this.limit} cost calls used up; it resets at ${new Date(resetsAt * 1000).toISOString()}`, {
        meta: { limit: this.limit, used: this.limit, window_s: 86_400, resets_at: resetsAt },
      })
    }
    if (this.limit <= 0) throw walletUsedUp()
    let row: { calls: number | string | bigint } | undefined
    if (network !== undefined && this.networkLimit > 0) {
      // Both counters in one transaction: one commit (on SQLite one fsync on the event loop, in front of the
      // call's first token, instead of two), and a refusal of either leaves neither counted.
      const networkUsedUp = () =>
        new QuotaExceededError('quota_exceeded', `daily quota of ${this.networkLimit} cost calls of your network (${network}) used up; it resets at ${new Date(resetsAt * 1000).toISOString()}`, {
          meta: { limit: this.networkLimit, used: this.networkLimit, window_s: 86_400, resets_at: resetsAt, scope: 'network' },
        })
      row = await this.commit((db) =>
        db.transaction().execute(async (trx) => {
          const counted = (await this.#count.on(trx)(key, day))[0]
          if (!counted) throw walletUsedUp()
          if ((await this.#countNetwork.on(trx)(NETWORK_KEY + network, day)).length === 0) throw networkUsedUp()
          return counted
        }),
      )
    } else {
      row = (await this.commit((db) => this.#count.on(db)(key, day)))[0]
      if (!row) throw walletUsedUp()
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
  async refund(wallet: string, network?: string): Promise<void> {
    const { day } = this.day()
    this.#usedUp.delete(wallet.toLowerCase())
    await this.#giveBack(wallet.toLowerCase(), day)
    if (network !== undefined && this.networkLimit > 0) await this.#giveBack(NETWORK_KEY + network, day)
  }

  async #giveBack(key: string, day: string): Promise<void> {
    await this.db
      .updateTable('cost_usage')
      .set((eb) => ({ calls: eb('calls', '-', 1) }))
      .where('wallet', '=', key)
      .where('day', '=', day)
      .where('calls', '>', 0)
      .execute()
  }
}
