import type { Kysely } from 'kysely'
import type { CostQuota } from '../auth/CostQuota.js'
import type { Database } from '../db/Database.js'

export type JournalUploads<U> = (wallet: string, limit: number) => Promise<U[]>

export type JournalSources<U> = {
  db: Kysely<Database>
  quota: CostQuota
  /** The wallet's paid uploads, newest first (the storage ledger). */
  uploads: JournalUploads<U>
}

export type JournalView<U> = {
  wallet: string
  first_login_at: number | null
  last_login_at: number | null
  sign_ins: { created_at: number; expires_at: number; revoked_at: number | null; current: boolean }[]
  quota: { limit: number; used: number; remaining: number; resets_at: number }
  cost_usage: { day: string; calls: number }[]
  uploads: U[]
}

const SIGN_INS = 20
const DAYS = 14
const UPLOADS = 20

/**
 * A wallet's own activity (`GET /users/me/journal`, the `/journal` page), read from the login tables
 * (`wallets`, `sessions`, `cost_usage`; addresses stored lower-case) and the storage ledger. Nothing is
 * written and no quota is spent. `currentTokenHash` marks the session making the request.
 */
export async function readJournal<U>(sources: JournalSources<U>, wallet: string, currentTokenHash: string | undefined): Promise<JournalView<U>> {
  const key = wallet.toLowerCase()
  const [registered, sessions, quota, costUsage, uploads] = await Promise.all([
    sources.db.selectFrom('wallets').selectAll().where('wallet', '=', key).executeTakeFirst(),
    sources.db
      .selectFrom('sessions')
      .select(['token_hash', 'created_at', 'expires_at', 'revoked_at'])
      .where('wallet', '=', key)
      .orderBy('created_at', 'desc')
      .limit(SIGN_INS)
      .execute(),
    sources.quota.state(key),
    sources.quota.history(key, DAYS),
    sources.uploads(key, UPLOADS),
  ])
  return {
    wallet: key,
    first_login_at: registered ? Number(registered.first_login_at) : null,
    last_login_at: registered ? Number(registered.last_login_at) : null,
    sign_ins: sessions.map((s) => ({
      created_at: Number(s.created_at),
      expires_at: Number(s.expires_at),
      revoked_at: s.revoked_at === null ? null : Number(s.revoked_at),
      current: currentTokenHash !== undefined && s.token_hash === currentTokenHash,
    })),
    quota: { ...quota, remaining: Math.max(0, quota.limit - quota.used) },
    cost_usage: costUsage,
    uploads,
  }
}
