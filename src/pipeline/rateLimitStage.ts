import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { ipKeyGenerator } from 'express-rate-limit'
import { RateLimitedError } from './refusals.js'
import { MemoryRateLimitStore, type RateLimitHit, type RateLimitStore } from './MemoryRateLimitStore.js'

export type RateLimitStageParameters = {
  windowS: number
  /** Requests per address per window. */
  max: number
  /** Where the counters live (default: this process's memory). */
  store?: RateLimitStore
  /** Milliseconds (tests). */
  now?: () => number
  /** Requests that are not counted (the balancers' health probes). */
  exempt?: (req: Request) => boolean
}

/**
 * The health probes a balancer or orchestrator sends (they read the last background check, no dependency): not
 * counted. Counted, a balancer's checks — all from its one address, against every replica, into the limit the
 * replicas share — used up that address's limit: with three replicas checked every 500 ms (720 a minute against
 * 600), every replica was marked down and every client got the balancer's 503.
 */
export function isHealthProbe(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && HEALTH_PROBES.has(req.path)
}

const HEALTH_PROBES: ReadonlySet<string> = new Set(['/health', '/health/live', '/health/ready'])

/**
 * Stage 2 (seed 000 §8): a global per-address limit before the gate, 429 `rate_limited` + `Retry-After`, and
 * the IETF draft-7 `RateLimit` / `RateLimit-Policy` headers on every response. IPv6 clients are keyed by their /56 (one host holds a whole prefix). Counting is O(1) per request with no timer per key
 * (`MemoryRateLimitStore`); a shared store plugs in through `store`.
 */
export function rateLimitStage(p: RateLimitStageParameters): RequestHandler {
  const windowMs = p.windowS * 1000
  const store = p.store ?? new MemoryRateLimitStore()
  const now = p.now ?? Date.now
  const policy = `${p.max};w=${p.windowS}`

  const apply = (req: Request, res: Response, next: NextFunction, hit: RateLimitHit): void => {
    const resetS = Math.max(0, Math.ceil((hit.resetAtMs - now()) / 1000))
    res.setHeader('RateLimit-Policy', policy)
    res.setHeader('RateLimit', `limit=${p.max}, remaining=${Math.max(0, p.max - hit.count)}, reset=${resetS}`)
    if (hit.count <= p.max) return next()
    const retryAfter = Math.max(1, resetS)
    // refused like every refusal: the list's on-error renders it (the catalogue's 429, `Retry-After`)
    next(new RateLimitedError(retryAfter))
  }

  return (req, res, next) => {
    if (p.exempt?.(req)) return next()
    const hit = store.hit(keyOf(req.ip ?? req.socket.remoteAddress ?? 'unknown'), windowMs, now())
    // A shared store that fails (database down) lets the request through: the limit is a guard, not a gate.
    if (hit instanceof Promise) hit.then((h) => apply(req, res, next, h), () => next())
    else apply(req, res, next, hit)
  }
}

/** The key an address counts under: IPv6 by its /56 (skipping the library's IPv6 RegExp for IPv4). */
function keyOf(ip: string): string {
  return ip.includes(':') ? ipKeyGenerator(ip) : ip
}

/** Counts more requests of an address in the stage's windows: the same store, keys and limit. */
export type RateLimiter = { take(address: string): Promise<{ allowed: boolean; retryAfterS: number }> }

/**
 * The stage's limit for what one HTTP request carries several of — each further tool call of one `/mcp`
 * request counts like a request of its HTTP twin. A shared store that fails lets the call through (as the stage).
 */
export function createRateLimiter(p: Pick<RateLimitStageParameters, 'windowS' | 'max' | 'now'> & { store: RateLimitStore }): RateLimiter {
  const now = p.now ?? Date.now
  const verdict = (hit: RateLimitHit) => ({ allowed: hit.count <= p.max, retryAfterS: Math.max(1, Math.ceil((hit.resetAtMs - now()) / 1000)) })
  return {
    async take(address) {
      let hit: RateLimitHit | Promise<RateLimitHit>
      try {
        hit = p.store.hit(keyOf(address), p.windowS * 1000, now())
        // read at once: the memory store hands back its live counter, which the next hit moves on
        if (!(hit instanceof Promise)) return verdict(hit)
        return verdict(await hit)
      } catch {
        return { allowed: true, retryAfterS: 0 }
      }
    },
  }
}
