import type { RequestHandler } from 'express'
import type { ErrorAnswerer, OperationStage } from './RequestExchange.js'
import type { Responder } from './responseValidationStage.js'
import type { ResponseInfo } from './runOperationStages.js'
import type { HttpResult, RequestContext } from './types.js'

/**
 * One named entry of a request's stage list (`router.pipeline`), as Fastify names its hooks: a request's whole
 * path — the steps, then how every answer is sent, how an error becomes an answer and what runs once the
 * response is finished — reads as one list in each app (src/app.ts, src/modelserver/app.ts).
 *
 * - `middleware`: before the route, on the raw request and response — a library's middleware through its
 *   public contract (CORS, static files, the trace span): it passes with `next()`, answers by ending the
 *   response itself (a preflight, a file) or fails with `next(error)`, which on-error answers. The entries
 *   after it run inside its `next()` (the trace span's context covers them). Listed before every step;
 * - `step`: answers (the rest is skipped) or passes (`undefined`);
 * - `respond`: sends every answer, the steps' and the on-error's (response validation);
 * - `on-error`: what a step that threw or rejected answers;
 * - `on-response`: called once the response is finished (metrics, access log).
 */
export type Stage<Locals extends Record<string, unknown> = Record<string, unknown>> =
  | { readonly kind: 'middleware'; readonly name: string; readonly run: RequestHandler }
  | { readonly kind: 'step'; readonly name: string; readonly run: OperationStage<Locals> }
  | { readonly kind: 'respond'; readonly name: string; readonly run: Responder }
  | { readonly kind: 'on-error'; readonly name: string; readonly run: ErrorAnswerer<Locals> }
  | { readonly kind: 'on-response'; readonly name: string; readonly run: (info: ResponseInfo) => void }

/** A middleware entry of the list, before the steps: `middleware('cors', corsStage(…))`. */
export function middleware<Locals extends Record<string, unknown>>(name: string, run: RequestHandler): Stage<Locals> {
  return { kind: 'middleware', name, run }
}

/** A step of the list: `step('gate', gate.stage(routeOf))`. */
export function step<Locals extends Record<string, unknown>>(name: string, run: OperationStage<Locals>): Stage<Locals> {
  return { kind: 'step', name, run }
}

/** The list's `on-error` entry: a thrown error → its answer. */
export function onError<Locals extends Record<string, unknown>>(
  name: string,
  run: ErrorAnswerer<Locals>,
): Stage<Locals> {
  return { kind: 'on-error', name, run }
}

/** The list's `on-response` entry, run once the response is finished. */
export function onResponse<Locals extends Record<string, unknown>>(name: string, run: (info: ResponseInfo) => void): Stage<Locals> {
  return { kind: 'on-response', name, run }
}

/**
 * The stage list split by kind; a bare `OperationStage` is an unnamed step. Middleware entries must come before
 * every step (they run on the request before it is routed); `middlewares` is left unset when there is none.
 */
export function splitStages<Locals extends Record<string, unknown>>(list: readonly (Stage<Locals> | OperationStage<Locals>)[]) {
  const middlewares: RequestHandler[] = []
  const steps: OperationStage<Locals>[] = []
  let respond: Responder | undefined
  let error: (ErrorAnswerer<Locals>) | undefined
  let response: ((info: ResponseInfo) => void) | undefined
  for (const entry of list) {
    if (typeof entry === 'function') steps.push(entry)
    else if (entry.kind === 'middleware') {
      if (steps.length > 0) throw new TypeError(`stage list: the middleware "${entry.name}" comes after a step; middlewares run before the route, so they are listed first`)
      middlewares.push(entry.run)
    } else if (entry.kind === 'step') steps.push(entry.run)
    else if (entry.kind === 'respond') respond = entry.run
    else if (entry.kind === 'on-error') error = entry.run
    else response = entry.run
  }
  return { middlewares: middlewares.length > 0 ? middlewares : undefined, steps, respond, onError: error, onResponse: response }
}

/** The names of the list's middleware and step entries, in order (a bare `OperationStage` is `unnamed`). */
export function stageNames<Locals extends Record<string, unknown>>(list: readonly (Stage<Locals> | OperationStage<Locals>)[]): { middlewares: string[]; stages: string[] } {
  const names = { middlewares: [] as string[], stages: [] as string[] }
  for (const entry of list) {
    if (typeof entry === 'function') names.stages.push('unnamed')
    else if (entry.kind === 'middleware') names.middlewares.push(entry.name)
    else if (entry.kind === 'step') names.stages.push(entry.name)
  }
  return names
}
