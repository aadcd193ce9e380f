import type { NextFunction, Request, RequestHandler, Response } from 'express'

/**
 * The pipeline's stages as one Express middleware, run in the order given. Express walks its router for
 * every `app.use` layer (path match, `parseurl`, bookkeeping per `next()`); the stages are all mounted at
 * `/`, so one layer that calls them in turn does the same with one match. As in Express: a stage calling
 * `next()` passes to the following stage, `next(err)` (or a synchronous throw or a rejected promise) skips the
 * rest and goes to Express's error handling, and the last stage's `next()` continues after this middleware.
 */
export function composeStages(...stages: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0
    const next: NextFunction = (error?: unknown) => {
      if (error !== undefined && error !== null) return done(error)
      const stage = stages[index++]
      if (!stage) return done()
      try {
        const ran = stage(req, res, next) as unknown
        if (ran instanceof Promise) ran.catch((rejection: unknown) => done(rejection ?? new Error('rejected without a reason')))
      } catch (thrown) {
        done(thrown)
      }
    }
    next()
  }
}
