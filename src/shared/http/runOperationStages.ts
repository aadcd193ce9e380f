import dc from 'node:diagnostics_channel'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import type { Logger } from '../logger.js'
import { type ErrorAnswerer, errorBody, operationOf, type OperationStage, type RequestExchange, type UnroutedResult } from './RequestExchange.js'
import type { Responder } from './responseValidationStage.js'
import { MalformedUrlError, renderRouterRefusal } from './routerRefusals.js'
import type { HttpResult, OperationInfo } from './types.js'

export type ResponseInfo = {
  operationId: string | undefined
  method: string
  path: string
  status: number
  durationMs: number
  requestBytes: number
  responseBytes: number
}

/**
 * Published as each stage of a request starts — `{ stage, req }`, the stage's name in its app's list (`respond`
 * before the answer is sent) — for tools that time a request stage by stage (`npm run bench -- llm -- --trace`).
 * Nothing is built or sent while nobody subscribes.
 */
export const stageStartChannel = dc.channel('pay2store:stage:start')

export type StageStart = { stage: string; req: Request }

export type RunOperationStagesParameters<Locals extends Record<string, unknown>> = {
  /**
   * Before the stages, in order, on the raw request (`middleware` entries of the list): each passes with
   * `next()`, answers by ending the response itself, or fails with `next(error)` — answered by the error mapping.
   */
  middlewares?: readonly RequestHandler[] | undefined
  /** In order; the first result ends the request (the handler stage, last, always answers). */
  stages: readonly OperationStage<Locals>[]
  /** The names of `middlewares` and `stages`, in the same order (for `stageStartChannel`). */
  names?: { middlewares: readonly string[]; stages: readonly string[] } | undefined
  /** Response validation: checks every result against the document and sends it. */
  respond: Responder
  /** Error mapping: an error any stage threw or gave back → its response (default: the router's own refusals, else 500 `internal_error`). */
  mapError?: ErrorAnswerer<Locals>
  /** Called once per request when the response is finished (metrics, access log). */
  onResponse?: (info: ResponseInfo) => void
  /**
   * The operation the request would reach (`router.routeOf`): a middleware's refusal, answered before the route,
   * is checked against that operation's responses (its 403, its 429), as a step's is against its own.
   */
  routeOf?: ((exchange: RequestExchange<Locals>) => OperationInfo | undefined) | undefined
  /** Creates the per-request `locals`. */
  createLocals?: () => Locals
  logger?: Logger
}

/** A response closed before it was finished: the client (or its connection) is gone. */
const clientGone = (res: Response) => res.destroyed && !res.writableFinished

/** What a request whose client is gone gets instead of an answer: nothing is sent. */
const CLIENT_GONE: UnroutedResult = Object.freeze({ status: 499 })

/**
 * The operation stages of one request as one Express middleware, in the order given: each stage either
 * answers (the answer is validated and sent, the rest skipped) or passes. A stage that throws, rejects or gives
 * back an `Error` is answered by the error mapping (a malformed percent-encoding anywhere is the client's); either way the
 * response goes through response validation. A stage that answers synchronously costs no promise.
 */
export function runOperationStages<Locals extends Record<string, unknown>>(parameters: RunOperationStagesParameters<Locals>): RequestHandler {
  const { stages, respond, onResponse, createLocals, logger } = parameters
  const stageNames = parameters.names?.stages ?? []
  const middlewareNames = parameters.names?.middlewares ?? []
  const announce = (stage: string | undefined, req: Request) => stageStartChannel.publish({ stage: stage ?? 'unnamed', req } satisfies StageStart)
  const mapError =
    parameters.mapError ??
    ((error: unknown): HttpResult => {
      const refusal = renderRouterRefusal(error)
      if (refusal) return refusal
      logger?.error({ err: error }, 'unhandled error in handler')
      return { status: 500, body: errorBody('internal_error', 'Internal error.') }
    })

  const toResult = (error: unknown, exchange: RequestExchange<Locals>): UnroutedResult => {
    // The client hung up first: what a stage failed with then (the request's signal aborted, a write to a closed
    // socket) is no fault of the server's and nobody is there to answer. Not an error of the server's log.
    if (clientGone(exchange.res)) {
      logger?.debug({ err: error, operationId: exchange.context?.operationId }, 'the client went away before its answer')
      return CLIENT_GONE
    }
    try {
      // a percent-encoding that does not decode, met by any stage (`decodeURIComponent`): the client's
      return mapError(error instanceof URIError ? new MalformedUrlError() : error, exchange.context, exchange)
    } catch (mapperError) {
      logger?.error({ err: mapperError }, 'error mapper failed')
      return { status: 500, body: errorBody('internal_error', 'Internal error.') }
    }
  }

  /** The steps of one request (or, `failed`, the answer to a middleware's error), then respond and on-response. */
  const runSteps = async (req: Request, res: Response, started: number, failed?: { error: unknown }) => {
    const url = req.originalUrl
    const queryIndex = url.indexOf('?')
    const exchange: RequestExchange<Locals> = {
      req,
      res,
      path: req.path,
      query: queryIndex >= 0 ? url.slice(queryIndex + 1) : '',
      locals: createLocals?.() ?? ({} as Locals),
    }
    let result: UnroutedResult | undefined = failed && toResult(failed.error, exchange)
    try {
      for (let i = 0; i < stages.length && result === undefined; i++) {
        if (stageStartChannel.hasSubscribers) announce(stageNames[i], req)
        const pending = stages[i]!(exchange)
        const answer = pending instanceof Promise ? await pending : pending
        result = answer instanceof Error ? toResult(answer, exchange) : answer
      }
    } catch (error) {
      result = toResult(error, exchange)
    }
    result ??= toResult(new Error('no stage answered the request'), exchange)
    const operation = operationOf(exchange) ?? (failed ? parameters.routeOf?.(exchange) : undefined)
    if (onResponse)
      res.once('finish', () =>
        onResponse({
          operationId: operation?.operationId,
          method: req.method,
          path: exchange.path,
          status: res.statusCode,
          durationMs: performance.now() - started,
          requestBytes: Number(req.headers['content-length'] ?? 0) || 0,
          responseBytes: Number(res.getHeader('content-length') ?? 0) || 0,
        }),
      )
    if (result === CLIENT_GONE) return
    if (stageStartChannel.hasSubscribers) announce('respond', req)
    const streaming = respond(req, res, result, operation)
    if (streaming) await streaming
  }

  const middlewares = parameters.middlewares ?? []
  if (middlewares.length === 0) return (req: Request, res: Response, _next: NextFunction) => runSteps(req, res, performance.now())
  return (req: Request, res: Response, fail: NextFunction) => {
    const arrived = performance.now()
    let index = 0
    // As Express calls middleware: `next()` runs the following entry inside the current one's call (a trace
    // span's context covers the rest), `next(error)` skips to the error's answer.
    const next: NextFunction = (error?: unknown) => {
      if (error !== undefined && error !== null) {
        // failed once its answer had started (a file cut mid-way): nothing else can be sent
        if (res.headersSent) return void res.destroy()
        return void runSteps(req, res, arrived, { error }).catch(fail)
      }
      const entry = middlewares[index++]
      if (!entry) return void runSteps(req, res, arrived).catch(fail)
      if (stageStartChannel.hasSubscribers) announce(middlewareNames[index - 1], req)
      try {
        const ran = entry(req, res, next) as unknown
        if (ran instanceof Promise) ran.catch((rejection: unknown) => next(rejection ?? new Error('rejected without a reason')))
      } catch (thrown) {
        next(thrown)
      }
    }
    next()
  }
}
