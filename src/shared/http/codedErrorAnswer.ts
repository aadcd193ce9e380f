import type { BaseError } from '../errors/BaseError.js'
import { errorBody, type UnroutedResult } from './RequestExchange.js'

/**
 * A coded error answered with `status` (its catalogue's): the plain `Error` body `{error: code, message, details?}`
 * (`details` its `meta`), or what the error's `answer` says instead — its route's body, no body at all — with the
 * headers it carries. A refusal that says when to come back (`details.retry_after_s`) says it in `Retry-After`
 * too, the header clients and load balancers read. Every catalogue renders through it: the gateway's and the
 * router's own.
 */
export function codedErrorAnswer(error: BaseError, status: number): UnroutedResult {
  const details = error.meta && Object.keys(error.meta).length > 0 ? error.meta : undefined
  const retryAfter = details?.retry_after_s
  const headers = {
    ...(typeof retryAfter === 'number' && Number.isInteger(retryAfter) && retryAfter >= 1 ? { 'Retry-After': String(retryAfter) } : {}),
    ...error.answer?.headers,
  }
  const withHeaders = Object.keys(headers).length > 0 ? { headers } : {}
  const answer = error.answer
  if (answer?.empty) return { status, ...withHeaders }
  return {
    status,
    body: answer?.body ?? errorBody(error.code, error.shortMessage, details),
    // outside any operation the body is checked against this schema (the plain body is an `Error`)
    component: answer?.body === undefined ? 'Error' : answer.component,
    ...withHeaders,
  }
}
