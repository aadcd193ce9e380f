import type { IncomingMessage, ServerResponse } from 'node:http'
import type { RequestHandler } from 'express'
import { ipKeyGenerator, rateLimit } from 'express-rate-limit'
import type { OperationInfo, UnroutedResult } from '../shared/http/index.js'

export type RateLimitStageParameters = {
  windowS: number
  /** Requests per address per window. */
  max: number
  /** Sends the 429 through the router (validated against the document like every response). */
  send: (req: IncomingMessage, res: ServerResponse, result: UnroutedResult, operation?: OperationInfo) => Promise<void>
  /** The operation a request routes to (so the 429 is checked against that operation's responses). */
  matchOperation: (method: string, path: string) => OperationInfo | undefined
}

/**
 * Stage 2 (seed 000 §8): a global per-address limit before the gate, 429 + `Retry-After` in the document's
 * `Error` shape. IPv6 clients are keyed by their /56 (one host holds a whole prefix).
 */
export function rateLimitStage(p: RateLimitStageParameters): RequestHandler {
  return rateLimit({
    windowMs: p.windowS * 1000,
    limit: p.max,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown'),
    handler: (req, res, _next, options) => {
      const retryAfter = Number(res.getHeader('Retry-After')) || Math.max(1, Math.ceil(options.windowMs / 1000))
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
    },
  })
}
