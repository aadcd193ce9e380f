import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { ModelServerError } from '../errors.js'
import { isPublicAddress } from '../http/isPublicAddress.js'
import type { ModelName } from '../store/ModelName.js'

/** Every address a host name resolves to (tests inject a stub so that no test ever asks real DNS). */
export type HostResolver = (hostname: string) => Promise<string[]>

export const systemResolver: HostResolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address)

export type RegistryEgressOptions = {
  /** `host[:port]` of the registries pulls and pushes may address (`MODELSERVER_REGISTRIES`). */
  allowed: ReadonlyArray<string>
  resolve?: HostResolver
  fetch?: typeof fetch
  /** Redirect hops followed per request (blob CDNs use one). */
  maxRedirects?: number
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

/**
 * Where the model server's outbound registry traffic may go. A pull or push names its registry, so the name is
 * attacker-chosen: only allow-listed registries are contacted; an allow-listed host written as a name must resolve
 * to public addresses only (an IP literal or `localhost` in the list is the operator saying where it is); a redirect
 * (how registries hand blobs to their CDN) is followed by hand, only for GET/HEAD, only to `https` and only to a
 * host whose every address is public. Errors name the step, never the address found or what answered there.
 * Resolution is checked just before each request; a name whose DNS answer changes between that check and the
 * connection (rebinding within the lookup's cache time) is a residual risk noted in docs/security.md.
 */
export class RegistryEgress {
  private readonly allowed: Set<string>
  private readonly resolve: HostResolver
  private readonly fetch: typeof fetch
  private readonly maxRedirects: number

  constructor(options: RegistryEgressOptions) {
    this.allowed = new Set(options.allowed.map((h) => h.toLowerCase()))
    this.resolve = options.resolve ?? systemResolver
    this.fetch = options.fetch ?? globalThis.fetch
    this.maxRedirects = options.maxRedirects ?? 5
  }

  /** 400 before anything is sent when the name's registry is not allow-listed. */
  assertAllowed(name: ModelName): void {
    if (!this.allowed.has(name.host)) {
      throw new ModelServerError(
        'registry_not_allowed',
        `registry '${name.host}' is not allowed (the operator lists the registries this server may use in MODELSERVER_REGISTRIES)`,
      )
    }
  }

  /** One request to an allow-listed registry, redirects followed under the rules above. */
  async send(url: string, init: RequestInit, what: string): Promise<Response> {
    let target = new URL(url)
    const method = (init.method ?? 'GET').toUpperCase()
    for (let hop = 0; ; hop++) {
      await this.checkDestination(target, hop === 0, what)
      let res: Response
      try {
        res = await this.fetch(target, { ...init, redirect: 'manual' })
      } catch (error) {
        if ((error as Error)?.name === 'AbortError') throw error
        throw unreachable(what, error)
      }
      if (!REDIRECTS.has(res.status)) return res
      await res.body?.cancel().catch(() => {})
      if (method !== 'GET' && method !== 'HEAD') throw refused(what, `registry redirected a ${method}; not followed`)
      if (hop >= this.maxRedirects) throw refused(what, 'too many redirects')
      const location = res.headers.get('location')
      let next: URL
      try {
        next = new URL(location ?? '', target)
      } catch {
        throw refused(what, 'registry sent an unreadable redirect')
      }
      if (!location) throw refused(what, 'registry sent a redirect without a location')
      if (next.protocol !== 'https:') throw refused(what, 'redirect refused: only https redirects are followed')
      target = next
    }
  }

  private async checkDestination(url: URL, configured: boolean, what: string): Promise<void> {
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase()
    if (isIP(host)) {
      if (configured || isPublicAddress(host)) return
      throw refused(what, 'redirect refused: the address is not public')
    }
    if (host === 'localhost' || host.endsWith('.localhost')) {
      if (configured) return
      throw refused(what, 'redirect refused: the address is not public')
    }
    let addresses: string[]
    try {
      addresses = await this.resolve(host)
    } catch (error) {
      throw unreachable(what, error)
    }
    if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
      throw refused(what, configured ? 'registry name resolves to a non-public address' : 'redirect refused: the address is not public')
    }
  }
}

function refused(what: string, why: string): ModelServerError {
  return new ModelServerError('registry_refused', `${what}: ${why}`)
}

/** The system error code only (`ECONNREFUSED`, `ENOTFOUND`): the library's message names the address. */
function unreachable(what: string, error: unknown): ModelServerError {
  const e = error as { code?: unknown; cause?: { code?: unknown } }
  const code = [e?.cause?.code, e?.code].find((c): c is string => typeof c === 'string' && /^[A-Z0-9_]{2,40}$/.test(c))
  return new ModelServerError('registry_unreachable', `${what}: registry unreachable${code ? ` (${code})` : ''}`, { cause: error })
}
