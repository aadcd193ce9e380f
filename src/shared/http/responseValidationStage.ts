import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Logger } from '../logger.js'
import { pumpStream } from './pumpStream.js'
import { errorBody, type UnroutedResult } from './RequestExchange.js'
import type { ResponseValidator } from './ResponseValidator.js'
import type { OperationInfo, ResponseValidationReport } from './types.js'

/** `off`: never check; `warn`: log and report mismatches, send as is; `error`: replace a mismatching response with 500. */
export type ResponseValidationMode = 'off' | 'warn' | 'error'

export type ResponseValidationStageParameters = {
  responseValidator: ResponseValidator
  mode: ResponseValidationMode
  /** Called for every response that does not match the document (tests collect these). */
  onResponseValidationError?: (report: ResponseValidationReport) => void
  logger?: Logger
}

/** Validates a result against the document and sends it; only a streamed body gives a promise. */
export type Responder = (req: IncomingMessage, res: ServerResponse, result: UnroutedResult, operation?: OperationInfo) => Promise<void> | undefined

/**
 * Response validation, the last stage every answer passes (the handler's, a stage's refusal, a mapped
 * error, and responses made outside the operation stages such as the rate limit's 429): the result is
 * checked against the operation's documented responses (or, outside any operation, against the
 * `components.schemas` entry it names), then written. A HEAD request gets the headers without the body.
 */
export function responseValidationStage({ responseValidator, mode, onResponseValidationError, logger }: ResponseValidationStageParameters): Responder {
  const check = (req: IncomingMessage, result: UnroutedResult, operation: OperationInfo | undefined): UnroutedResult => {
    if (mode === 'off') return result
    let errors: string[] = []
    const method = (req.method ?? 'GET').toLowerCase()
    if (operation) errors = responseValidator.validate(operation.definition as never, result, method)
    else if (result.component && result.body !== undefined && !result.stream) errors = responseValidator.validateComponent(result.component, result.body)
    if (errors.length === 0) return result
    const report: ResponseValidationReport = { operationId: operation?.operationId, method: req.method ?? 'GET', url: req.url ?? '', status: result.status, errors }
    onResponseValidationError?.(report)
    logger?.warn({ responseValidation: report }, 'response does not match the OpenAPI document')
    if (mode === 'warn') return result
    return { status: 500, body: errorBody('response_validation_failed', `The ${result.status} response does not match the API document.`, { errors }) }
  }

  return (req, res, input, operation) => {
    const result = check(req, input, operation)
    if (res.headersSent) return
    res.statusCode = result.status
    const headers = result.headers
    if (headers) for (const name of Object.keys(headers)) res.setHeader(name, headers[name] as string | number | string[])
    const isHead = req.method === 'HEAD'
    if (result.stream) {
      if (!res.hasHeader('content-type')) res.setHeader('content-type', result.contentType ?? 'application/octet-stream')
      if (isHead) {
        res.end()
        return
      }
      if (result.flushHeaders) res.flushHeaders()
      let piping: Promise<void>
      try {
        piping = pumpStream(result.stream, res)
      } catch (error) {
        piping = Promise.reject(error)
      }
      return piping.catch((error: unknown) => {
        logger?.debug({ err: error }, 'response stream ended early')
        if (!res.writableEnded) res.destroy()
      })
    }
    let payload: string | Buffer | undefined
    if (result.body === undefined) payload = undefined
    else if (typeof result.body === 'string' || Buffer.isBuffer(result.body)) {
      payload = result.body
      if (!res.hasHeader('content-type')) res.setHeader('content-type', result.contentType ?? 'text/plain; charset=utf-8')
    } else {
      payload = JSON.stringify(result.body)
      if (!res.hasHeader('content-type')) res.setHeader('content-type', result.contentType ?? 'application/json; charset=utf-8')
    }
    if (payload !== undefined) res.setHeader('content-length', Buffer.byteLength(payload))
    res.end(isHead ? undefined : payload)
    return undefined
  }
}
