import type { IncomingMessage } from 'node:http'
import type { Request, Response } from 'express'
import type { CompiledOperation, Unrouted } from './compileOperations.js'
import type { HttpResult, OperationInfo, RequestContext } from './types.js'

/** A result for a response outside any operation may name the `components.schemas` entry its JSON body must match. */
export type UnroutedResult = HttpResult & {
  /** `components.schemas` name the JSON body must match (responses outside any operation are validated against it). */
  component?: string
}

/**
 * One request on its way through the operation stages: what each stage leaves for the next. Created by
 * `runOperationStages`; `match` is filled by the first stage that asks (`matchOf`), `context` by the route stage.
 */
export type RequestExchange<Locals extends Record<string, unknown> = Record<string, unknown>> = {
  req: Request
  res: Response
  /** Request path as sent, without the query string. */
  path: string
  /** The raw query string (without `?`), `''` when there is none. */
  query: string
  /** Per-request scratch space of the stages and handlers (e.g. the resolved session). */
  locals: Locals
  /** The operation the request routes to, or why none does; asked once per request (see `matchOf`). */
  match?: CompiledOperation | Unrouted
  /** The request's one context, built by the route stage. */
  context?: RequestContext<Locals>
  /** Created on first use of `context.signal` (most handlers never read it; an AbortController costs µs). */
  controller?: AbortController
}

/**
 * What a stage gives back: a result ends the request (it is validated and sent), `undefined` passes to the next
 * stage, and an `Error` value is a refusal — answered by the error mapping as a throw would be, without the
 * rejected promise a thrown refusal costs on every refused request (the gate's 401: 15–20 µs of CPU,
 * `npm run bench -- pipeline -- --routes unauthorized`).
 */
export type StageAnswer = UnroutedResult | Error | undefined

/** One stage of the operation pipeline (`StageAnswer`). A throw or a rejection goes to the error mapping too. */
export type OperationStage<Locals extends Record<string, unknown> = Record<string, unknown>> = (
  exchange: RequestExchange<Locals>,
) => StageAnswer | Promise<StageAnswer>

/**
 * What a stage's error is answered with (an app's on-error entry, a router's `mapError`): given the request's
 * context once the route stage built it, and always its exchange — for an error before the route (a
 * middleware's), the exchange is what tells the path, and the operation it would have reached (`routeOf`).
 */
export type ErrorAnswerer<Locals extends Record<string, unknown> = Record<string, unknown>> = (
  error: unknown,
  context: RequestContext<Locals> | undefined,
  exchange: RequestExchange<Locals>,
) => HttpResult

/** The operation the exchange's request routes to (matched once, on first ask: the gate asks before the route stage). */
export function matchOf<Locals extends Record<string, unknown>>(
  exchange: RequestExchange<Locals>,
  match: (method: string, path: string) => CompiledOperation | Unrouted,
): CompiledOperation | Unrouted {
  return (exchange.match ??= match(exchange.req.method, exchange.path))
}

/** The matched operation, when there is one. */
export function operationOf<Locals extends Record<string, unknown>>(exchange: RequestExchange<Locals>): OperationInfo | undefined {
  const match = exchange.match
  return match === undefined || typeof match === 'string' ? undefined : match.info
}

/**
 * A request's context. A class so the lazy parts (`ip`, `signal`) are prototype getters rather than closures
 * made for every request: Express resolves `req.ip` through proxy-addr on every read, and an
 * AbortController (plus its `close` listener) costs microseconds most handlers never need.
 */
export class PipelineContext<Locals extends Record<string, unknown>> implements RequestContext<Locals> {
  readonly operationId: string
  readonly method: string
  readonly path: string
  readonly url: string
  readonly headers: IncomingMessage['headers']
  body: unknown = undefined
  security: Record<string, unknown> = {}
  readonly raw: Request
  readonly locals: Locals
  #exchange: RequestExchange<Locals>
  #ip: string | undefined

  constructor(
    readonly operation: OperationInfo,
    exchange: RequestExchange<Locals>,
    public params: Record<string, string>,
    public query: Record<string, unknown>,
  ) {
    const req = exchange.req
    this.operationId = operation.operationId
    this.method = req.method
    this.path = exchange.path
    this.url = req.originalUrl
    this.headers = req.headers
    this.raw = req
    this.locals = exchange.locals
    this.#exchange = exchange
  }

  get ip(): string {
    if (this.#ip === undefined) {
      const req = this.#exchange.req
      this.#ip = req.ip ?? req.socket.remoteAddress ?? ''
    }
    return this.#ip
  }

  set ip(value: string) {
    this.#ip = value
  }

  /** Aborted when the client goes away before the response is finished. */
  get signal(): AbortSignal {
    const exchange = this.#exchange
    if (!exchange.controller) {
      const controller = new AbortController()
      exchange.controller = controller
      const res = exchange.res
      if (res.destroyed) {
        if (!res.writableFinished) controller.abort()
      } else
        res.once('close', () => {
          if (!res.writableFinished) controller.abort()
        })
    }
    return exchange.controller.signal
  }
}

export function errorBody(error: string, message: string, details?: Record<string, unknown>) {
  return details ? { error, message, details } : { error, message }
}
