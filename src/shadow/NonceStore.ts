import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { ShadowTables } from '../db/migrations/0003_shadow.js'
import type { BoundParams, ShadowScope } from './scopes.js'

export const NONCE_TTL_SECONDS = 120
/** Expired rows are kept this long after expiry (so a late caller gets 410, not 404), then pruned. */
export const NONCE_PRUNE_GRACE_SECONDS = 120

export type NonceRecord = {
  nonce: string
  scope: ShadowScope
  params: BoundParams
  message: string
  issuedAt: number
  expiresAt: number
  consumedAt: number | null
}

export type NonceStoreOptions = {
  now?: () => number
  ttlSeconds?: number
  pruneGraceSeconds?: number
}

/**
 * Single-use challenge nonces (seed 000 §3.1) in the `shadow_nonces` table of a kysely database — the main
 * PostgreSQL database (shared by every gateway process) or a SQLite file.
 *
 * Acceptance is `markConsumed`: ONE conditional UPDATE `… SET consumed_at = now WHERE nonce = ? AND
 * consumed_at IS NULL AND expires_at > now`. The database's row locking makes it linearizable, so when
 * several processes race on one nonce exactly one sees `1 row updated`.
 */
export class NonceStore {
  readonly #db: Kysely<ShadowTables>
  readonly #now: () => number
  readonly ttlSeconds: number
  readonly #pruneGrace: number

  constructor(db: Kysely<ShadowTables>, options: NonceStoreOptions = {}) {
    this.#db = db
    this.#now = options.now ?? (() => Math.floor(Date.now() / 1000))
    this.ttlSeconds = options.ttlSeconds ?? NONCE_TTL_SECONDS
    this.#pruneGrace = options.pruneGraceSeconds ?? NONCE_PRUNE_GRACE_SECONDS
  }

  now(): number {
    return this.#now()
  }

  static newNonce(): string {
    return `0x${randomBytes(32).toString('hex')}`
  }

  /** Stores a new issued record (after pruning expired ones). `buildMessage` receives the final times. */
  async issue(
    scope: ShadowScope,
    params: BoundParams,
    buildMessage: (nonce: string, issuedAt: number, expiresAt: number) => string,
  ): Promise<NonceRecord> {
    const issuedAt = this.#now()
    await this.prune(issuedAt)
    const record: NonceRecord = {
      nonce: NonceStore.newNonce(),
      scope,
      params,
      message: '',
      issuedAt,
      expiresAt: issuedAt + this.ttlSeconds,
      consumedAt: null,
    }
    record.message = buildMessage(record.nonce, record.issuedAt, record.expiresAt)
    await this.#db
      .insertInto('shadow_nonces')
      .values({
        nonce: record.nonce,
        scope,
        params: JSON.stringify(params),
        message: record.message,
        issued_at: issuedAt,
        expires_at: record.expiresAt,
        consumed_at: null,
      })
      .execute()
    return record
  }

  async get(nonce: string): Promise<NonceRecord | undefined> {
    const row = await this.#db.selectFrom('shadow_nonces').selectAll().where('nonce', '=', nonce).executeTakeFirst()
    if (!row) return undefined
    return {
      nonce: row.nonce,
      scope: row.scope as ShadowScope,
      params: JSON.parse(row.params) as BoundParams,
      message: row.message,
      issuedAt: Number(row.issued_at),
      expiresAt: Number(row.expires_at),
      consumedAt: row.consumed_at === null ? null : Number(row.consumed_at),
    }
  }

  /** The atomic check-and-mark. True for exactly one caller per nonce, and only while unexpired. */
  async markConsumed(nonce: string, now = this.#now()): Promise<boolean> {
    const result = await this.#db
      .updateTable('shadow_nonces')
      .set({ consumed_at: now })
      .where('nonce', '=', nonce)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    return BigInt(result.numUpdatedRows) === 1n
  }

  /** Deletes records that expired more than the grace period ago. Returns how many were deleted. */
  async prune(now = this.#now()): Promise<number> {
    const result = await this.#db
      .deleteFrom('shadow_nonces')
      .where('expires_at', '<=', now - this.#pruneGrace)
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }

  async count(): Promise<number> {
    const row = await this.#db
      .selectFrom('shadow_nonces')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }
}
