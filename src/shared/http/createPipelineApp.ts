import express, { type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express'
import { mountPipeline, type MountPipelineParameters } from './mountPipeline.js'

export type CreatePipelineAppParameters = MountPipelineParameters & {
  /** Settings of the app (`trust proxy`, `x-powered-by`…), applied before any request. */
  configure?: (app: Express) => void
}

/**
 * An Express app whose whole handling of a request is `pipeline`, without Express's router in front of it.
 *
 * Why: the gateway's pipeline is one middleware at `/` (`router.pipeline`: its whole stage list), so Express's router would only
 * walk one layer that matches every path — and for that it builds a final handler, parses the URL, saves and
 * restores `req` fields and matches a path pattern on every request: 0.06 → 0.02 ms from server to first
 * stage when it was skipped (docs/performance.md, "What the figures depend on").
 *
 * How, through Express's public API only: the app is a request listener of ours whose prototype is a plain
 * `express()` app, so everything documented of an app is there and unchanged — settings (`set`, `enabled`),
 * `listen` (which serves `this`, the listener), the app-specific `request`/`response` prototypes of
 * "Overriding the Express API" (`req.app`, `req.ip` with `trust proxy`, `res.json`…). The listener does for
 * each request what Express documents of its request and response objects (`req.res`, `res.req`,
 * `res.locals`, `req.originalUrl`, `req.baseUrl`, the app's prototypes), then calls the pipeline; nothing of
 * Express is replaced. The underlying app has the same pipeline mounted the ordinary way (`mountPipeline`),
 * so calling it directly behaves the same, only slower.
 */
export function createPipelineApp(pipeline: RequestHandler, { fallback, configure }: CreatePipelineAppParameters): Express {
  const base = express()
  configure?.(base)
  mountPipeline(base, pipeline, { fallback })
  const listener = (req: Request, res: Response, callback?: NextFunction) => {
    if (base.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express')
    req.res = res
    res.req = req
    // Already the app's prototypes when the server built the objects (createExpressServer); else set here.
    if (Object.getPrototypeOf(req) !== base.request) Object.setPrototypeOf(req, base.request)
    if (Object.getPrototypeOf(res) !== base.response) Object.setPrototypeOf(res, base.response)
    res.locals ??= Object.create(null) as Record<string, unknown>
    req.originalUrl ??= req.url
    req.baseUrl = ''
    const done: NextFunction = (error?: unknown) => {
      if (callback) return callback(error)
      fallback(req, res, error)
    }
    req.next = done
    try {
      const ran = pipeline(req, res, done) as unknown
      if (ran instanceof Promise) ran.catch((rejection: unknown) => done(rejection ?? new Error('rejected without a reason')))
    } catch (thrown) {
      done(thrown)
    }
  }
  Object.setPrototypeOf(listener, base)
  return listener as unknown as Express
}
