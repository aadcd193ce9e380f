import { hostname } from 'node:os'
import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import type { Logger } from '../shared/logger.js'

export type InstanceRegistryOptions = {
  db: Kysely<Database>
  instanceId: string
  /** How often the heartbeat is written (ms). */
  heartbeatMs: number
  /** An instance whose heartbeat is older than this (s) is dead: its in-flight work is taken over. */
  leaseS: number
  logger?: Logger | undefined
  /** Epoch milliseconds (tests). */
  now?: () => number
}

/**
 * This instance's row in `gateway_instances`: registered at start, its heartbeat refreshed every
 * `heartbeatMs`, marked stopped by a clean shutdown. Liveness of the others is read from the same table by
 * the conditional statements that take over a dead instance's work (`Ledger.requeueOrphaned`).
 */
export class InstanceRegistry {
  readonly id: string
  readonly leaseS: number
  readonly heartbeatMs: number
  readonly #db: Kysely<Database>
  readonly #logger: Logger | undefined
  readonly #now: () => number
  #timer: NodeJS.Timeout | undefined
  #beating: Promise<void> | undefined

  constructor({ db, instanceId, heartbeatMs, leaseS, logger, now = Date.now }: InstanceRegistryOptions) {
    this.#db = db
    this.id = instanceId
    this.heartbeatMs = heartbeatMs
    this.leaseS = leaseS
    this.#logger = logger
    this.#now = now
  }

  #seconds(): number {
    return Math.floor(this.#now() / 1000)
  }

  /** Registers (or revives) this instance and starts the heartbeat. */
  async start(): Promise<void> {
    const t = this.#seconds()
    const row = { host: hostname().slice(0, 255), pid: process.pid, started_at: t, heartbeat_at: t, stopped_at: null }
    await this.#db
      .insertInto('gateway_instances')
      .values({ instance_id: this.id, ...row })
      .onConflict((oc) => oc.column('instance_id').doUpdateSet(row))
      .execute()
    if (this.#timer) return
    this.#timer = setInterval(() => {
      if (this.#beating) return // a slow database: never pile beats up
      this.#beating = this.beat()
        .catch((error: unknown) => this.#logger?.error({ err: String(error) }, 'instance heartbeat failed'))
        .finally(() => (this.#beating = undefined))
    }, this.heartbeatMs)
    this.#timer.unref()
  }

  async beat(): Promise<void> {
    await this.#db.updateTable('gateway_instances').set({ heartbeat_at: this.#seconds(), stopped_at: null }).where('instance_id', '=', this.id).execute()
  }

  /** Stops the heartbeat and marks the instance stopped, so others need not wait for the lease. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#beating
    await this.#db.updateTable('gateway_instances').set({ stopped_at: this.#seconds() }).where('instance_id', '=', this.id).execute()
  }

  /** Instances whose heartbeat is within the lease (for `/health/detailed` and the soak reconciliation). */
  async live(): Promise<string[]> {
    const rows = await this.#db
      .selectFrom('gateway_instances')
      .select('instance_id')
      .where('heartbeat_at', '>=', this.#seconds() - this.leaseS)
      .where('stopped_at', 'is', null)
      .execute()
    return rows.map((r) => r.instance_id)
  }
}
