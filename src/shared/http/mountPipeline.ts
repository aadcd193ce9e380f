import type { Express, NextFunction, Request, RequestHandler, Response } from 'express'

export type MountPipelineParameters = {
  /** Answers a request the pipeline failed on (a stage threw or called `next(err)`), or one it passed on. */
  fallback: (req: Request, res: Response, error: unknown) => void
}

/**
 * Makes `pipeline` the whole of `app`, through Express's public API: one middleware at `/` (the stages are
 * listed in it, `router.pipeline`), then the fallback for what the pipeline passes on and for what it
 * fails on — the API's error shape instead of Express's HTML page. Routes added to the app later are never
 * reached. (An earlier version replaced Express's `app.handle`, which Express marks private, to save its
 * router's walk of that one layer; no library's internals are patched.)
 */
export function mountPipeline(app: Express, pipeline: RequestHandler, { fallback }: MountPipelineParameters): void {
  app.use(pipeline)
  app.use((req: Request, res: Response) => fallback(req, res, undefined))
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => fallback(req, res, error ?? new Error('failed without a reason')))
}
