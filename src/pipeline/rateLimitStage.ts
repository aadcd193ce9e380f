import type { IncomingMessage, ServerResponse } from 'node:http'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { ipKeyGenerator } from 'express-rate-limit'
import type { OperationInfo, UnroutedResult } from '../shared/http/index.js'
import { MemoryRateLimitStore, type RateLimitHit, type RateLimitStore } from './MemoryRateLimitStore.js'

export type RateLimitStageParameters = {
  windowS: number
  /** Requests per address per window. */
  max: number
  /** Sends the 429 through the router (validated against the document like every response). */
  send: (req: IncomingMessage, res: ServerResponse, result: UnroutedResult, operation?: OperationInfo) => Promise<void>
  /** The operation a request routes to (so the 429 is checked against that operation's responses). */
  matchOperation: (method: string, path: string) => OperationInfo | undefined
  /** Where the counters live (default: this process's memory). */
  store?: RateLimitStore
  /** Milliseconds (tests). */
  now?: () => number
}

/**
 * Stage 2 (seed 000 §8): a global per-address limit before the gate, 429 + `Retry-After` in the document's
 * `Error` shape, and the IETF draft-7 `RateLimit` / `RateLimit-Policy` headers on every response. IPv6 clients
 * are keyed by their /56 (one host holds a whole prefix). Counting is O(1) per request with no timer per key
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
    void p.send(
      req,
      res,
      {
        status: 429,
        headers: { 'Retry-After': String(retryAfter) },
        body: { error: 'rate_limited', message: `too many requests; retry after ${retryAfter} s`, details: { retry_after_s: retryAfter } },
        component: 'Error',
      },
      p.matchOperation(req.method, req.path),
    )
  }

  return (req, res, next) => {
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown'
    // Only an IPv6 address (it always has a colon) is masked to its /56; skip the library's IPv6 RegExp for IPv4.
    const key = ip.includes(':') ? ipKeyGenerator(ip) : ip
    const hit = store.hit(key, windowMs, now())
    // A shared store that fails (database down) lets the request through: the limit is a guard, not a gate.
    if (hit instanceof Promise) hit.then((h) => apply(req, res, next, h), () => next())
    else apply(req, res, next, hit)
  }
}
