/**
 * The router's own refusals — no operation for the path or the method, a malformed URL, a request the document
 * refuses, a body that cannot be read — as coded errors, given back by the route, validation and body stages like
 * any other stage's refusal. Each API's on-error renders them: the gateway through its catalogue (its rows give
 * the statuses), the model server in the shape the document declares for the route (Ollama, OpenAI, Anthropic,
 * OCI). The fields carry what a renderer words its own message from (the method, the issues, the parser's text).
 * Ordinary traffic, answered and never logged: no stack is captured.
 */
import { BaseError } from '../errors/BaseError.js'
import { defineError } from '../errors/defineError.js'
import { codedErrorAnswer } from './codedErrorAnswer.js'
import type { UnroutedResult } from './RequestExchange.js'
import type { RequestValidationIssue } from './types.js'

const ordinary = { stackless: true } as const

/** No operation of the document at the path. */
export const NoOperationError = defineError(
  'NoOperationError',
  'not_found',
  (method: string, path: string) => ({ message: `No route for ${method} ${path}.`, fields: { method, path } }),
  ordinary,
)
export type NoOperationError = InstanceType<typeof NoOperationError>

/** The path has operations, none for the method; `Allow` names the methods it has (RFC 9110 §15.5.6). */
export const MethodNotAllowedError = defineError(
  'MethodNotAllowedError',
  'method_not_allowed',
  (method: string, path: string, allowed: readonly string[]) => ({
    message: `${method} is not allowed on ${path}.`,
    answer: { headers: { Allow: allowed.join(', ') } },
    fields: { method, path, allowed },
  }),
  ordinary,
)
export type MethodNotAllowedError = InstanceType<typeof MethodNotAllowedError>

/** A percent-encoding in the URL that does not decode. */
export const MalformedUrlError = defineError('MalformedUrlError', 'invalid_request', () => 'Malformed percent-encoding in the URL.', ordinary)

/** A request the document refuses: its parameters or its body; `issues` in the order the validator found them. */
export const RequestNotValidError = defineError(
  'RequestNotValidError',
  'invalid_request',
  (issues: readonly RequestValidationIssue[]) => {
    const first = issues[0]
    return {
      message: `request does not match the API description: ${first ? `${first.location} ${first.path} ${first.message}` : 'invalid'}`,
      meta: { errors: issues },
      fields: { issues },
    }
  },
  ordinary,
)
export type RequestNotValidError = InstanceType<typeof RequestNotValidError>

/** A body of a media type (or an encoding) the operation does not take. */
export const UnsupportedMediaTypeError = defineError('UnsupportedMediaTypeError', 'unsupported_media_type', (message: string) => message, ordinary)

/**
 * A JSON body that does not parse (or nests too deep). `parserMessage`: what the JSON parser said, when it said
 * something (a renderer that quotes the parser, as Ollama does, reads it).
 */
export const InvalidJsonError = defineError(
  'InvalidJsonError',
  'invalid_json',
  (message: string = 'The request body is not valid JSON.', parserMessage?: string) => ({ message, fields: { parserMessage } }),
  ordinary,
)
export type InvalidJsonError = InstanceType<typeof InvalidJsonError>

/** A body over the operation's limit. `parserMessage`: the body reader's own words. */
export const PayloadTooLargeError = defineError(
  'PayloadTooLargeError',
  'payload_too_large',
  (parserMessage?: string) => ({ message: 'The request body is too large.', fields: { parserMessage } }),
  ordinary,
)
export type PayloadTooLargeError = InstanceType<typeof PayloadTooLargeError>

/** The client stopped sending its body. */
export const RequestAbortedError = defineError('RequestAbortedError', 'request_aborted', () => 'The request was aborted.', ordinary)

/** An operation none of whose security requirements is met, and no answer of the app's own for it. */
export const UnauthorizedError = defineError('UnauthorizedError', 'unauthorized', () => 'authentication required', ordinary)

/** An operation of the document this app has no handler for. */
export const NotImplementedError = defineError('NotImplementedError', 'not_implemented', (operationId: string) => `Operation ${operationId} is not implemented yet.`, ordinary)

/**
 * The router's catalogue: the status of each refusal above. An API's own catalogue takes these rows (the gateway
 * composes them into its catalogue, the model server spreads them into its table), so a refusal means the same
 * status wherever the router runs.
 */
export const routerRefusalRows = {
  not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  invalid_request: { status: 400 },
  unsupported_media_type: { status: 415 },
  invalid_json: { status: 400 },
  payload_too_large: { status: 413 },
  request_aborted: { status: 400 },
  unauthorized: { status: 401 },
  not_implemented: { status: 501 },
} as const satisfies Record<string, { status: number }>

/**
 * A router refusal as a router without an on-error of its app answers it (`codedErrorAnswer` with the router's
 * status); `undefined` for anything else.
 */
export function renderRouterRefusal(error: unknown): UnroutedResult | undefined {
  if (!(error instanceof BaseError) || !Object.hasOwn(routerRefusalRows, error.code)) return undefined
  return codedErrorAnswer(error, routerRefusalRows[error.code as keyof typeof routerRefusalRows].status)
}
