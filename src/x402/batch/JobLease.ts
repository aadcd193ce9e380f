import type { Kysely } from 'kysely'
import type { Database } from '../../db/Database.js'
import { insertedOnce } from '../../db/insertedOnce.js'

/**
 * A named lease in `batch_settlement_leases` (migration 0018): at most one holder at a time among every gateway
 * instance of one database, taken and given back with one conditional statement each. It expires, so an instance
 * that died holding it does not block the job for longer than `ttlS`.
 */
export class JobLease {
  readonly #db: Kysely<Database>
  readonly #now: () => number

  constructor(db: Kysely<Database>, now: () => number = () => Math.floor(Date.now() / 1000)) {
    this.#db = db
    this.#now = now
  }

  /** True when `holder` now holds `name` (it was free, had expired, or was already its own). */
  async take(name: string, holder: string, ttlS: number): Promise<boolean> {
    const t = this.#now()
    const fresh = await insertedOnce(
      this.#db
        .insertInto('batch_settlement_leases')
        .values({ name, holder, expires_at: t + ttlS })
        .onConflict((oc) => oc.doNothing()),
    )
    if (fresh) return true
    const taken = await this.#db
      .updateTable('batch_settlement_leases')
      .set({ holder, expires_at: t + ttlS })
      .where('name', '=', name)
      .where((eb) => eb.or([eb('expires_at', '<', t), eb('holder', '=', holder)]))
      .executeTakeFirst()
    return Number(taken.numUpdatedRows) === 1
  }

  async give(name: string, holder: string): Promise<void> {
    await this.#db.deleteFrom('batch_settlement_leases').where('name', '=', name).where('holder', '=', holder).execute()
  }

  /** Runs `job` while holding `name`; undefined (and `job` never runs) when another holder has it. */
  async run<T>(name: string, holder: string, ttlS: number, job: () => Promise<T>): Promise<T | undefined> {
    if (!(await this.take(name, holder, ttlS))) return undefined
    try {
      return await job()
    } finally {
      await this.give(name, holder)
    }
  }
}
