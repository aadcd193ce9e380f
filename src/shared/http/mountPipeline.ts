import type { Express, NextFunction, Request, RequestHandler, Response } from 'express'

export type MountPipelineParameters = {
  /** Answers a request the pipeline failed on (a stage threw or called `next(err)`), or one it passed on. */
  fallback: (req: Request, res: Response, error: unknown) => void
}

/**
 * Makes `pipeline` the whole of `app`: Express's `app.handle` without its router.
 *
 * The gateway's pipeline is one middleware at `/` (`composeStages`), so Express's router would only walk one
 * layer that matches every path — and for that it builds a final handler, parses the URL, saves and restores
 * `req` fields and matches a path pattern on every request: ~0.04 ms on the 2-core VM before the first stage
 * runs, measured in-process under `npm run bench -- llm` (about a tenth of what the gateway spends before
 * it asks the model server). Everything else `app.handle` does is done here the same way: the circular
 * references, the app's prototypes (already there when the server built the objects, see
 * `createExpressServer`), `res.locals`, `req.originalUrl`/`req.baseUrl`. Middleware that needs a router of
 * its own (the public assets) still mounts one inside its stage.
 *
 * The app stays an Express app (`app.listen`, supertest and `createExpressServer` call `app.handle` as
 * before). What changes is what happens to an error: `fallback` answers it in the API's error shape instead
 * of Express's HTML page.
 */
export function mountPipeline(app: Express, pipeline: RequestHandler, { fallback }: MountPipelineParameters): void {
  const handle = (req: Request, res: Response, callback?: NextFunction) => {
    if (app.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express')
    req.res = res
    res.req = req
    if (Object.getPrototypeOf(req) !== app.request) Object.setPrototypeOf(req, app.request)
    if (Object.getPrototypeOf(res) !== app.response) Object.setPrototypeOf(res, app.response)
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
  ;(app as unknown as { handle: typeof handle }).handle = handle
}
