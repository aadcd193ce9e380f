import type { Channel, ChannelStorage, ChannelUpdateResult } from '@x402/evm/batch-settlement/server'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/Database.js'
import { insertedOnce } from '../../db/insertedOnce.js'

/** How often a change made from a state another instance changed meanwhile is read and tried again. */
const MAX_ATTEMPTS = 50

/**
 * The channel records of @x402/evm's `batch-settlement` server scheme in `batch_channels` (migration 0018), so
 * that they outlive a restart and every gateway instance of one database sees the same ones.
 *
 * `updateChannel` is the scheme's one way to change a record and must be atomic across instances: it reads the
 * row and its `version`, runs the scheme's callback, and writes with a compare-and-set on that version (a new
 * record: an insert that the primary key lets through once). When another instance changed the row in between,
 * nothing is written and the callback runs again on the fresh row. This works the same on PostgreSQL and on one
 * SQLite file, without holding a transaction open across the callback.
 */
export class SqlChannelStorage implements ChannelStorage {
  readonly #db: Kysely<Database>
  /** The chain of these channels (one storage per network: a claim batch is sent on one chain). */
  readonly network: string
  readonly #now: () => number

  constructor(db: Kysely<Database>, network: string, now: () => number = () => Math.floor(Date.now() / 1000)) {
    this.#db = db
    this.network = network
    this.#now = now
  }

  async get(channelId: string): Promise<Channel | undefined> {
    const row = await this.#db.selectFrom('batch_channels').select('state').where('channel_id', '=', channelId.toLowerCase()).where('network', '=', this.network).executeTakeFirst()
    return row ? (JSON.parse(row.state) as Channel) : undefined
  }

  async list(): Promise<Channel[]> {
    const rows = await this.#db.selectFrom('batch_channels').select('state').where('network', '=', this.network).orderBy('channel_id').execute()
    return rows.map((r) => JSON.parse(r.state) as Channel)
  }

  /** The channels whose charged total is above what was claimed on chain (what a claim would submit). */
  async unclaimed(): Promise<Channel[]> {
    const rows = await this.#db
      .selectFrom('batch_channels')
      .select(['state', 'charged_atomic', 'claimed_atomic'])
      .where('network', '=', this.network)
      .orderBy('channel_id')
      .execute()
    return rows.filter((r) => BigInt(r.charged_atomic) > BigInt(r.claimed_atomic)).map((r) => JSON.parse(r.state) as Channel)
  }

  async updateChannel(channelId: string, update: (current: Channel | undefined) => Channel | undefined): Promise<ChannelUpdateResult> {
    const id = channelId.toLowerCase()
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const row = await this.#db.selectFrom('batch_channels').select(['state', 'version']).where('channel_id', '=', id).where('network', '=', this.network).executeTakeFirst()
      const current = row ? (JSON.parse(row.state) as Channel) : undefined
      const next = update(current)
      if (next === current) return { channel: current, status: 'unchanged' }
      if (next === undefined) {
        if (!row) return { channel: undefined, status: 'unchanged' }
        const deleted = await this.#db.deleteFrom('batch_channels').where('channel_id', '=', id).where('version', '=', row.version).executeTakeFirst()
        if (Number(deleted.numDeletedRows) === 1) return { channel: undefined, status: 'deleted' }
        continue
      }
      const t = this.#now()
      const columns = {
        state: JSON.stringify(next),
        charged_atomic: next.chargedCumulativeAmount,
        claimed_atomic: next.totalClaimed,
        last_request_at: Math.floor(next.lastRequestTimestamp / 1000),
        updated_at: t,
      }
      if (!row) {
        const inserted = await insertedOnce(
          this.#db
            .insertInto('batch_channels')
            .values({
              channel_id: id,
              network: this.network,
              payer: next.channelConfig.payer.toLowerCase(),
              receiver: next.channelConfig.receiver.toLowerCase(),
              token: next.channelConfig.token.toLowerCase(),
              version: 1,
              ...columns,
            })
            .onConflict((oc) => oc.doNothing()),
        )
        if (inserted) return { channel: next, status: 'updated' }
        continue
      }
      const updated = await this.#db
        .updateTable('batch_channels')
        .set({ ...columns, version: Number(row.version) + 1 })
        .where('channel_id', '=', id)
        .where('version', '=', row.version)
        .executeTakeFirst()
      if (Number(updated.numUpdatedRows) === 1) return { channel: next, status: 'updated' }
    }
    throw new Error(`batch-settlement channel ${id}: changed by others ${MAX_ATTEMPTS} times in a row`)
  }
}
