import { buildSIWxSchema, parseSIWxHeader, SIGN_IN_WITH_X, type SIWxExtension, type SIWxPayload, validateSIWxMessage, verifySIWxSignature } from '@x402/extensions/sign-in-with-x'
import type { Kysely } from 'kysely'
import { randomBytes } from 'node:crypto'
import { getAddress } from 'viem'
import type { Database } from '../db/Database.js'
import { insertedOnce } from '../db/insertedOnce.js'
import { checkingCredentials } from './CredentialsUnavailableError.js'
import type { SignatureVerifier, ValidSession } from './LoginService.js'

/** The request header of a proof (x402 `sign-in-with-x`): base64 of the signed CAIP-122 payload. */
export const SIWX_HEADER = 'SIGN-IN-WITH-X'

/** How old a proof's `issuedAt` may be (the extension's default), and how long a challenge the gateway issues lives. */
const MAX_AGE_S = 300

export type SignInWithXOptions = {
  db: Kysely<Database>
  /** `SERVICE_PUBLIC_ORIGIN`: a proof's `domain` and `uri` must be bound to it (never to the request's Host). */
  publicOrigin: string
  /** The chains a proof may name (CAIP-2): the login chain, as for Sign-In with Ethereum. */
  chains: string[]
  statement: string
  /** The login's verifier (EIP-1271 / EIP-6492 wallets through the login chain's RPC); default: EOA signatures only. */
  verifySignature?: SignatureVerifier
  /** Epoch seconds. */
  now?: () => number
}

/** Why a proof was refused (the extension's codes, plus a nonce used before and a chain not accepted here). */
export type SiwxRefusal = { reason: string; message: string }

/**
 * x402 `sign-in-with-x` (CAIP-122; @x402/extensions' parsing, message checks and signature verification): a
 * wallet proves itself in the same request, without a login round trip, and is served as that wallet wherever a
 * session is accepted — beside Sign-In with Ethereum's session token. A proof is accepted once: its `domain` is
 * this gateway's public host and its `uri` this origin (a proof signed for another site is refused), it was
 * issued less than five minutes ago and has not expired, it names a chain accepted here, its signature recovers
 * to its address (or the wallet contract approves it), and its nonce was never used on any instance nor issued
 * by the login (whose challenges are kept a day past their five minutes, longer than any proof is accepted).
 */
export class SignInWithX {
  readonly #o: SignInWithXOptions
  readonly #origin: URL
  readonly #now: () => number
  #prunedAt = 0

  constructor(o: SignInWithXOptions) {
    this.#o = o
    this.#origin = new URL(o.publicOrigin)
    this.#now = o.now ?? (() => Math.floor(Date.now() / 1000))
  }

  /** The wallet's session for this request, or undefined (the request is then anonymous, as with a bad token). */
  async authenticate(header: string): Promise<ValidSession | undefined> {
    const outcome = await this.check(header)
    return 'wallet' in outcome ? outcome : undefined
  }

  /** The session of a valid proof (its nonce now used), or why it was refused. */
  async check(header: string): Promise<ValidSession | SiwxRefusal> {
    let payload: SIWxPayload
    try {
      payload = parseSIWxHeader(header)
    } catch (error) {
      return { reason: 'invalid_siwx_header', message: error instanceof Error ? error.message : String(error) }
    }
    if (!this.#o.chains.includes(payload.chainId)) {
      return { reason: 'invalid_siwx_unsupported_chain', message: `chain ${payload.chainId} is not accepted here; sign for ${this.#o.chains.join(' or ')}` }
    }
    const valid = await validateSIWxMessage(payload, this.#origin, { maxAge: MAX_AGE_S * 1000 })
    if (!valid.isValid) return { reason: valid.invalidReason, message: valid.invalidMessage }
    // A login challenge (Sign-In with Ethereum of the same origin, chain and statement) parses as a proof too: its
    // signature, seen on the way, would serve once more — after the login used it, even after the logout.
    const login = await checkingCredentials(() => this.#o.db.selectFrom('login_challenges').select('nonce').where('nonce', '=', payload.nonce).executeTakeFirst())
    if (login) return { reason: 'invalid_siwx_nonce', message: 'this is a login challenge, not a sign-in-with-x proof: sign a proof of your own' }
    const verifier = this.#o.verifySignature
    const signed = await verifySIWxSignature(payload, verifier ? { evmVerifier: (args) => verifier(args) } : undefined)
    if (!signed.isValid) return { reason: signed.invalidReason, message: signed.invalidMessage }
    const wallet = getAddress(payload.address)
    const t = this.#now()
    const expiresAt = Math.max(Math.floor(new Date(payload.issuedAt).getTime() / 1000) + MAX_AGE_S, payload.expirationTime ? Math.floor(new Date(payload.expirationTime).getTime() / 1000) : 0)
    const fresh = await checkingCredentials(() =>
      insertedOnce(
        this.#o.db
          .insertInto('siwx_nonces')
          .values({ nonce: payload.nonce, wallet: wallet.toLowerCase(), expires_at: expiresAt })
          .onConflict((oc) => oc.doNothing()),
      ),
    )
    if (!fresh) return { reason: 'invalid_siwx_nonce', message: 'this proof was used before: sign a new one for each request' }
    // nonces past every proof's window can no longer be replayed (the proof is refused as too old)
    if (t - this.#prunedAt >= 60) {
      this.#prunedAt = t
      await checkingCredentials(() => this.#o.db.deleteFrom('siwx_nonces').where('expires_at', '<', t - MAX_AGE_S).execute())
    }
    return { wallet, expires_at: expiresAt }
  }

  /**
   * The `sign-in-with-x` declaration of a 402 (its `extensions` key): a fresh challenge for `resourceUrl` —
   * this origin's host and the resource, a random nonce, five minutes to sign — and the chains accepted.
   */
  declaration(resourceUrl: string): Record<string, SIWxExtension> {
    const issued = new Date(this.#now() * 1000)
    return {
      [SIGN_IN_WITH_X]: {
        info: {
          domain: this.#origin.host,
          uri: resourceUrl,
          statement: this.#o.statement,
          version: '1',
          nonce: randomBytes(16).toString('hex'),
          issuedAt: issued.toISOString(),
          expirationTime: new Date(issued.getTime() + MAX_AGE_S * 1000).toISOString(),
          resources: [resourceUrl],
        },
        supportedChains: this.#o.chains.map((chainId) => ({ chainId, type: 'eip191' as const })),
        schema: buildSIWxSchema(),
      },
    }
  }
}
