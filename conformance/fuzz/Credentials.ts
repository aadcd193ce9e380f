/**
 * The credentials of the fuzzer's tiers, live: a wallet session (signed in with a wallet of the run's seed),
 * the overlord's bearer (with its key), garbage (a well-formed session token, an unsecured JWT and a cookie that
 * are all invalid) and none. Refreshed when they may have been spent (a fuzzed logout, the bearer's 300 s).
 */
import type { PrivateKeyAccount } from 'viem/accounts'
import { SeededRandom } from '../SeededRandom.js'
import type { FuzzRequest } from './requestArbitrary.js'

/** `link`: a chain step whose credential an OpenAPI link carried (a fresh session, the bearer just issued). */
export type Tier = 'none' | 'session' | 'bearer' | 'garbage' | 'link'
/** The tiers drawn requests go out under. */
export const TIERS: readonly Tier[] = ['none', 'session', 'bearer', 'garbage']

export class Credentials {
  #session: Promise<string | undefined> | undefined
  #sessionUses = 0
  #sessionSpent = false
  #bearer: { value: Promise<string | undefined>; at: number } | undefined
  readonly #random: SeededRandom

  constructor(
    private readonly gateway: string | undefined,
    private readonly overlord: PrivateKeyAccount | undefined,
    seed: number,
  ) {
    this.#random = new SeededRandom(seed, 'fuzz-credentials')
  }

  async #post(path: string, body: unknown): Promise<any> {
    // Bounded like every fuzz request: a gateway that stops answering must fail the run, not hang it.
    const res = await fetch(`${this.gateway}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    })
    return res.status === 200 ? res.json() : undefined
  }

  async #login(): Promise<string | undefined> {
    if (!this.gateway) return undefined
    const wallet = this.#random.account()
    const challenge = await this.#post('/users/challenge', { wallet: wallet.address })
    if (!challenge) return undefined
    const session = await this.#post('/users/register-with-signature', { wallet: wallet.address, challenge: challenge.challenge, signature: await wallet.signMessage({ message: challenge.challenge }) })
    return session?.session_token
  }

  async #verify(): Promise<string | undefined> {
    if (!this.gateway || !this.overlord) return undefined
    const challenge = await this.#post('/admin/shadow/challenge', { scope: 'auth' })
    if (!challenge) return undefined
    const verified = await this.#post('/admin/shadow/verify', { nonce: challenge.nonce, signature: await this.overlord.signMessage({ message: challenge.message }) })
    return verified?.jwt
  }

  async headers(tier: Tier, request: Pick<FuzzRequest, 'path'>): Promise<Record<string, string>> {
    switch (tier) {
      case 'none':
      case 'link':
        return {}
      case 'garbage':
        return { 'x-session-token': `st_${'Z'.repeat(43)}`, authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.', cookie: 'svc_session=garbage' }
      case 'session': {
        if (!this.#session || this.#sessionUses++ > 200 || this.#sessionSpent) {
          this.#session = this.#login()
          this.#sessionUses = 0
          this.#sessionSpent = false
        }
        const token = await this.#session
        // a logout revokes the session it carries: the next request logs in again
        if (/logout/.test(request.path)) this.#sessionSpent = true
        return token ? { 'x-session-token': token } : {}
      }
      case 'bearer': {
        if (!this.#bearer || Date.now() - this.#bearer.at > 240_000) this.#bearer = { value: this.#verify(), at: Date.now() }
        const jwt = await this.#bearer.value
        return jwt ? { authorization: `Bearer ${jwt}` } : {}
      }
    }
  }
}

