import { hash, randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import { getAddress, isAddress, verifyMessage } from 'viem'
import { createSiweMessage, parseSiweMessage } from 'viem/siwe'
import type { ChangeFeed } from '../cache/ChangeFeed.js'
import { SessionCache } from '../cache/SessionCache.js'
import type { EventSink } from '../catalogue/EventSink.js'
import { type BackgroundCommit, directCommit } from '../db/createBackgroundCommit.js'
import type { Database } from '../db/Database.js'
import { precompiledQuery } from '../db/precompiledQuery.js'
import { LoginError } from './LoginError.js'
import { checkingCredentials } from './CredentialsUnavailableError.js'

export type LoginServiceParameters = {
  db: Kysely<Database>
  /** Origin the messages name (`SERVICE_PUBLIC_ORIGIN`): its host is the EIP-4361 `domain`, itself the `uri`. */
  publicOrigin: string
  chainId: number
  statement: string
  challengeTtlS: number
  sessionTtlS: number
  events?: EventSink | undefined
  /** Epoch seconds (tests move time). */
  now?: () => number
  /** Overlord address, if configured (the permissions view reports it). */
  overlordAddress?: () => string | undefined
  /**
   * Checks the EIP-191 signature of `message` by `address`. Default: ECDSA recovery only (EOAs, offline);
   * `chainSignatureVerifier` also accepts smart-contract wallets (EIP-1271 / EIP-6492) through the chain.
   */
  verifySignature?: SignatureVerifier
  /**
   * Changes of `sessions` by any writer: live sessions are then kept in memory (`SessionCache`). Without it
   * every `validate` reads the database.
   */
  changeFeed?: ChangeFeed | undefined
  /** Most sessions kept in memory (default 10,000). */
  sessionCacheMax?: number | undefined
  onCacheEvent?: ((event: 'hit' | 'miss' | 'invalidation') => void) | undefined
  /**
   * How a challenge's row is committed (the database handle's `backgroundCommit`): anyone may ask for a
   * challenge, and a commit whose fsync held the event loop would hold every other request for the disk.
   */
  commit?: BackgroundCommit | undefined
}

export type SignatureVerifier = (p: { address: `0x${string}`; message: string; signature: `0x${string}` }) => Promise<boolean>

export type LoginChallenge = { challenge: string; nonce: string; issued_at: number; expires_at: number }
export type Session = { session_token: string; wallet: string; expires_at: number }
export type ValidSession = { wallet: string; expires_at: number }
export type WalletPermissions = {
  wallet: string
  tier: 'public' | 'session' | 'overlord'
  registered: boolean
  has_session: boolean
  view: 'sign_in' | 'welcome_back'
}

/** Longest wait of a revocation for every instance to confirm it (`ChangeFeed.barrier`). */
const BARRIER_TIMEOUT_MS = 1_000

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** EIP-4361 nonce: 32 alphanumeric characters (~190 bits) drawn without modulo bias. */
export function newLoginNonce(): string {
  let out = ''
  while (out.length < 32) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && out.length < 32) out += ALPHANUMERIC[byte % 62]
    }
  }
  return out
}

/** SHA-256 hex of a session token: the only form in which a token is stored. */
export function hashToken(token: string): string {
  // One-shot `crypto.hash` (this runs on every gated request): about a third of the cost of a Hash object.
  return hash('sha256', token, 'hex')
}

/** Normalises an address for comparison and storage (lower-case); throws `invalid_wallet`. */
export function normalizeWallet(wallet: string): string {
  if (typeof wallet !== 'string' || !isAddress(wallet, { strict: false }))
    throw new LoginError('invalid_wallet', 'wallet must be a 0x-prefixed 20-byte hex address')
  return wallet.toLowerCase()
}

/**
 * Wallet login on Sign-In with Ethereum (EIP-4361) messages (seed 000 §4.3, §5.1).
 * 1. `createChallenge(wallet)`: an EIP-4361 message (domain and URI from the public origin, chain id, a
 *    single-use nonce, issued-at, expiration) stored server-side.
 * 2. `register(wallet, challenge, signature)`: the challenge must be the stored text byte for byte, issued for
 *    this wallet, unexpired and unconsumed; the EIP-191 signature must recover to the wallet; the nonce is then
 *    consumed by one conditional UPDATE (two concurrent registrations cannot both succeed) and a random session
 *    token is issued — stored only as its SHA-256.
 * 3. `validate(token)`, `logout(token)`, `permissions(wallet, token?)`.
 */
export class LoginService {
  private readonly db: Kysely<Database>
  private readonly now: () => number
  private readonly domain: string

  /** The session lookup every gated request makes: built and compiled once (primary-key lookup by token hash). */
  private readonly sessionByHash: (tokenHash: string) => Promise<{ wallet: string; expires_at: number; revoked_at: number | null }[]>
  private readonly sessions: SessionCache | undefined

  constructor(private readonly parameters: LoginServiceParameters) {
    this.db = parameters.db
    this.sessionByHash = precompiledQuery(parameters.db, 1, (db, tokenHash) =>
      db.selectFrom('sessions').select(['wallet', 'expires_at', 'revoked_at']).where('token_hash', '=', tokenHash!),
    )
    this.sessions = parameters.changeFeed
      ? new SessionCache({ feed: parameters.changeFeed, max: parameters.sessionCacheMax, onEvent: parameters.onCacheEvent })
      : undefined
    this.now = parameters.now ?? (() => Math.floor(Date.now() / 1000))
    this.domain = new URL(parameters.publicOrigin).host
  }

  async createChallenge(wallet: string): Promise<LoginChallenge> {
    const normalized = normalizeWallet(wallet)
    const issuedAt = this.now()
    const expiresAt = issuedAt + this.parameters.challengeTtlS
    const nonce = newLoginNonce()
    const message = createSiweMessage({
      domain: this.domain,
      address: getAddress(normalized),
      statement: this.parameters.statement,
      uri: this.parameters.publicOrigin,
      version: '1',
      chainId: this.parameters.chainId,
      nonce,
      issuedAt: new Date(issuedAt * 1000),
      expirationTime: new Date(expiresAt * 1000),
    })
    await (this.parameters.commit ?? directCommit(this.db))((db) => db.insertInto('login_challenges').values({ nonce, wallet: normalized, message, issued_at: issuedAt, expires_at: expiresAt, consumed_at: null }).execute())
    await this.prune(issuedAt)
    return { challenge: message, nonce, issued_at: issuedAt, expires_at: expiresAt }
  }

  async register(wallet: string, challenge: string, signature: string): Promise<Session> {
    const normalized = normalizeWallet(wallet)
    let nonce: string | undefined
    try {
      nonce = parseSiweMessage(challenge).nonce
    } catch {
      nonce = undefined
    }
    if (!nonce) throw new LoginError('challenge_invalid', 'challenge unknown or already used')
    const record = await this.db.selectFrom('login_challenges').selectAll().where('nonce', '=', nonce).executeTakeFirst()
    if (!record || record.message !== challenge) throw new LoginError('challenge_invalid', 'challenge unknown or already used')
    if (record.wallet !== normalized) throw new LoginError('challenge_invalid', 'challenge was issued for another wallet')
    if (record.consumed_at !== null) throw new LoginError('challenge_invalid', 'challenge unknown or already used')
    const now = this.now()
    if (Number(record.expires_at) <= now) throw new LoginError('challenge_expired', 'challenge expired; request a new one')
    let valid = false
    try {
      valid = await (this.parameters.verifySignature ?? verifyMessage)({ address: getAddress(normalized), message: challenge, signature: signature as `0x${string}` })
    } catch {
      valid = false
    }
    if (!valid) throw new LoginError('signature_invalid', 'signature does not recover to the wallet')
    const consumed = await this.db
      .updateTable('login_challenges')
      .set({ consumed_at: now })
      .where('nonce', '=', nonce)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst()
    if (Number(consumed.numUpdatedRows) !== 1) throw new LoginError('challenge_invalid', 'challenge unknown or already used')
    const token = `st_${randomBytes(32).toString('base64url')}`
    const expiresAt = now + this.parameters.sessionTtlS
    await this.db
      .insertInto('sessions')
      .values({ token_hash: hashToken(token), wallet: normalized, created_at: now, expires_at: expiresAt, revoked_at: null })
      .execute()
    await this.db
      .insertInto('wallets')
      .values({ wallet: normalized, first_login_at: now, last_login_at: now })
      .onConflict((oc) => oc.column('wallet').doUpdateSet({ last_login_at: now }))
      .execute()
    const checksummed = getAddress(normalized)
    await this.parameters.events?.emit({ kind: 'auth.login', payload: { wallet: checksummed } })
    return { session_token: token, wallet: checksummed, expires_at: expiresAt }
  }

  /** The session a token belongs to, or `undefined` when unknown, expired or revoked. */
  async validate(token: string | undefined): Promise<ValidSession | undefined> {
    if (!token || token.length > 256) return undefined
    const tokenHash = hashToken(token)
    // A live session may come from memory: it is dropped there as soon as the database reports its row
    // changed (a logout or revocation on any instance, by any writer), and the expiry is checked every time.
    const cached = this.sessions?.get(tokenHash)
    if (cached) return cached.expires_at <= this.now() ? undefined : { wallet: cached.wallet, expires_at: cached.expires_at }
    const epoch = this.sessions?.epoch()
    const [row] = await checkingCredentials(() => this.sessionByHash(tokenHash))
    if (!row || row.revoked_at !== null || Number(row.expires_at) <= this.now()) return undefined
    const session = { wallet: getAddress(row.wallet), expires_at: Number(row.expires_at) }
    if (epoch !== undefined) this.sessions!.store(tokenHash, session, epoch)
    return session
  }

  /** Revokes a token; true when it was an active session. */
  async logout(token: string): Promise<boolean> {
    const now = this.now()
    const tokenHash = hashToken(token)
    const result = await this.db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst()
    // This instance forgets it before answering; the others when the change feed reports the UPDATE, and
    // the barrier waits (bounded) until every instance has been told, so none answers from memory after this.
    this.sessions?.invalidate(tokenHash)
    const revoked = Number(result.numUpdatedRows) === 1
    if (revoked && this.sessions) await this.parameters.changeFeed!.barrier(BARRIER_TIMEOUT_MS)
    return revoked
  }

  /** Stops following session changes. */
  close(): void {
    this.sessions?.close()
  }

  async permissions(wallet: string, token?: string): Promise<WalletPermissions> {
    const normalized = normalizeWallet(wallet)
    const session = await this.validate(token)
    const hasSession = session !== undefined && session.wallet.toLowerCase() === normalized
    // A wallet with a live session has logged in: it is registered without reading `wallets` (the session
    // lookup is served from memory, so the usual welcome-back view makes no database round trip at all).
    const registered = hasSession || (await this.db.selectFrom('wallets').select('wallet').where('wallet', '=', normalized).executeTakeFirst()) !== undefined
    const overlord = this.parameters.overlordAddress?.()?.toLowerCase()
    const tier: WalletPermissions['tier'] = hasSession ? 'session' : overlord && overlord === normalized ? 'overlord' : 'public'
    return {
      wallet: hasSession ? session.wallet : getAddress(normalized),
      tier,
      registered,
      has_session: hasSession,
      view: hasSession ? 'welcome_back' : 'sign_in',
    }
  }

  /** Drops challenges expired for more than a day and sessions expired for more than a week. */
  private async prune(now: number): Promise<void> {
    if (Math.random() > 0.05) return
    await this.db.deleteFrom('login_challenges').where('expires_at', '<', now - 86_400).execute()
    await this.db.deleteFrom('sessions').where('expires_at', '<', now - 7 * 86_400).execute()
  }
}
