import { createHash, timingSafeEqual } from 'node:crypto'
import { isLoopbackAddress } from '../shared/addressRange.js'

/** Why a scraper was refused: no token sent (or none configured off loopback), or a wrong one. */
export type MetricsRefusal = 'metrics_token_required' | 'metrics_token_invalid'

const digest = (text: string) => createHash('sha256').update(text).digest()

/**
 * Who may read `/metrics`: a scraper on this machine (loopback: an agent beside the gateway),
 * and anyone else only with `Authorization: Bearer <SERVICE_METRICS__TOKEN>`. Without a configured
 * token, `/metrics` is loopback-only. The aggregate counters name no one, but they tell a stranger the traffic,
 * the error rates and the models in use. Behind a proxy the client address is the proxy's unless
 * `SERVICE_TRUST_PROXY` says how many hops to trust.
 */
export class MetricsAccess {
  readonly #token: Buffer | undefined

  constructor(token: string | undefined) {
    this.#token = token === undefined ? undefined : digest(token)
  }

  /** `undefined` = allowed; otherwise why not. */
  check(ip: string | undefined, authorization: string | undefined): MetricsRefusal | undefined {
    if (isLoopbackAddress(ip)) return undefined
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1]
    if (bearer === undefined || this.#token === undefined) return 'metrics_token_required'
    // Compared as digests, in constant time: the token's length and prefix are not told by the timing either.
    return timingSafeEqual(digest(bearer), this.#token) ? undefined : 'metrics_token_invalid'
  }

  /** Whether off-loopback scrapers can be served at all. */
  get tokenConfigured(): boolean {
    return this.#token !== undefined
  }
}
