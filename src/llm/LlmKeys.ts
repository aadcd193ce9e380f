import { createHash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { type BackgroundCommit, directCommit } from '../db/createBackgroundCommit.js'
import type { Database } from '../db/Database.js'
import { ulid } from '../marketplace/ulid.js'
import { BaseError } from '../shared/errors/BaseError.js'
import { checkingCredentials } from '../auth/CredentialsUnavailableError.js'

export class LlmKeyError extends BaseError<'llm_key_not_found'> {
  override name = 'LlmKeyError'
}

/** Every key starts with this (secret scanners and people can tell it from a session token, `st_…`). */
export const LLM_KEY_PREFIX = 'sk-p2s-'

export type LlmKeyView = { key_id: string; name: string; prefix: string; created_at: number; last_used_at: number | null; revoked_at: number | null }
export type CreatedLlmKey = LlmKeyView & { key: string }

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex')
}

export type LlmKeysOptions = {
  /**
   * How a key's `last_used_at` is committed (the database handle's `backgroundCommit`): it is written on the
   * path of an SDK's call, and a commit whose fsync held the event loop would hold every other request too.
   */
  commit?: BackgroundCommit | undefined
  /** A key's use is written at most this often per key and instance (seconds; default 60): `last_used_at` is to the minute. */
  touchEveryS?: number | undefined
}

/** Keys whose last write of `last_used_at` is remembered; past it the memory starts over (at worst a few more writes). */
const TOUCHED_MAX = 10_000

/**
 * Per-wallet API keys for `/llm/v1` (so SDKs need no session token). A key is shown once, at creation; only
 * its SHA-256 is stored (a database leak reveals no usable key). Revocation is immediate: every use looks the
 * hash up and requires `revoked_at` to be null. Its use is recorded to the minute: `last_used_at` is written
 * on the first use of a key in `touchEveryS`, not on every call (a write per call would be a commit per call).
 */
export class LlmKeys {
  readonly #commit: BackgroundCommit
  readonly #touchEveryS: number
  /** key_id → when this instance last wrote its `last_used_at`. */
  readonly #touched = new Map<string, number>()

  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => number,
    { commit = directCommit(db), touchEveryS = 60 }: LlmKeysOptions = {},
  ) {
    this.#commit = commit
    this.#touchEveryS = touchEveryS
  }

  async create(wallet: string, name: string | undefined): Promise<CreatedLlmKey> {
    const key = `${LLM_KEY_PREFIX}${randomBytes(32).toString('base64url')}`
    const row = {
      key_id: `key_${ulid()}`,
      wallet: wallet.toLowerCase(),
      key_hash: hashKey(key),
      prefix: key.slice(0, LLM_KEY_PREFIX.length + 6),
      name: name ?? 'default',
      created_at: this.now(),
      last_used_at: null,
      revoked_at: null,
    }
    await this.db.insertInto('llm_keys').values(row).execute()
    return { key, ...view(row) }
  }

  async list(wallet: string): Promise<LlmKeyView[]> {
    const rows = await this.db.selectFrom('llm_keys').selectAll().where('wallet', '=', wallet.toLowerCase()).orderBy('created_at', 'desc').orderBy('key_id', 'desc').execute()
    return rows.map(view)
  }

  /** Revokes one of the wallet's keys (another wallet's key is `llm_key_not_found`, as is an unknown id). */
  async revoke(wallet: string, keyId: string): Promise<LlmKeyView> {
    const now = this.now()
    await this.db
      .updateTable('llm_keys')
      .set({ revoked_at: now })
      .where('key_id', '=', keyId)
      .where('wallet', '=', wallet.toLowerCase())
      .where('revoked_at', 'is', null)
      .execute()
    const row = await this.db.selectFrom('llm_keys').selectAll().where('key_id', '=', keyId).where('wallet', '=', wallet.toLowerCase()).executeTakeFirst()
    if (!row) throw new LlmKeyError('llm_key_not_found', `no key ${keyId} for this wallet`)
    return view(row)
  }

  /** The wallet of a live key, or `undefined` (unknown, revoked, or not a key at all). */
  async validate(key: string | undefined): Promise<{ wallet: string; key_id: string } | undefined> {
    if (!key?.startsWith(LLM_KEY_PREFIX) || key.length > 128) return undefined
    const row = await checkingCredentials(() =>
      this.db.selectFrom('llm_keys').select(['key_id', 'wallet']).where('key_hash', '=', hashKey(key)).where('revoked_at', 'is', null).executeTakeFirst(),
    )
    if (!row) return undefined
    const now = this.now()
    const touched = this.#touched.get(row.key_id)
    if (touched === undefined || now - touched >= this.#touchEveryS) {
      if (this.#touched.size >= TOUCHED_MAX) this.#touched.clear()
      this.#touched.set(row.key_id, now)
      await checkingCredentials(() => this.#commit((db) => db.updateTable('llm_keys').set({ last_used_at: now }).where('key_id', '=', row.key_id).execute()))
    }
    return row
  }
}

function view(row: { key_id: string; name: string; prefix: string; created_at: number | string; last_used_at: number | string | null; revoked_at: number | string | null }): LlmKeyView {
  const n = (v: number | string | null) => (v === null ? null : Number(v))
  return { key_id: row.key_id, name: row.name, prefix: row.prefix, created_at: Number(row.created_at), last_used_at: n(row.last_used_at), revoked_at: n(row.revoked_at) }
}
