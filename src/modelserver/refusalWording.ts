/**
 * How the model server words the router's refusals (`src/shared/http/routerRefusals.ts`) and its body reader's:
 * Ollama's messages (`404 page not found`, `model is required`, `invalid JSON: …`) and the OCI
 * distribution codes on the registry routes (OpenAI's `param` is the shared `openAiParamOf`). The status is the catalogue's; only the words and the OCI code are
 * chosen here. Used by the one error mapper (`createErrorMapper.ts`).
 */
import type { BaseError } from '../shared/errors/BaseError.js'
import {
  type HttpResult,
  InvalidJsonError,
  MalformedUrlError,
  MethodNotAllowedError,
  NoOperationError,
  NotImplementedError,
  PayloadTooLargeError,
  RequestAbortedError,
  RequestNotValidError,
  type RequestValidationIssue,
  UnsupportedMediaTypeError,
} from '../shared/http/index.js'
import { UnreadableBodyError } from './errors.js'
import { ociError, ociValidationError } from './registry/ociErrors.js'

const ROUTER_REFUSALS = [
  NoOperationError,
  MethodNotAllowedError,
  MalformedUrlError,
  RequestNotValidError,
  UnsupportedMediaTypeError,
  InvalidJsonError,
  PayloadTooLargeError,
  RequestAbortedError,
  NotImplementedError,
  UnreadableBodyError,
] as const

/** One of the router's or the body reader's refusals (not a handler's error). */
export function isRouterRefusal(error: unknown): boolean {
  return ROUTER_REFUSALS.some((Refusal) => error instanceof Refusal)
}

/** The message a client reads: Ollama's words for the router's refusals, the error's own short message otherwise. */
export function refusalMessage(error: BaseError): string {
  if (error instanceof NoOperationError) return `404 page not found: ${error.method} ${error.path}`
  if (error instanceof MethodNotAllowedError) return `method ${error.method} not allowed on ${error.path}`
  if (error instanceof RequestNotValidError) return ollamaValidationMessage(error.issues)
  if (error instanceof InvalidJsonError) return error.parserMessage === undefined ? error.shortMessage : `invalid JSON: ${error.parserMessage}`.trim()
  if (error instanceof PayloadTooLargeError) return error.parserMessage ?? error.shortMessage
  return error.shortMessage
}

/** A router refusal on a registry route, as the distribution specification words it; `undefined` for anything else. */
export function ociRefusal(error: unknown, status: number): HttpResult | undefined {
  if (error instanceof NoOperationError) return ociError('NAME_UNKNOWN', { path: error.path })
  if (error instanceof MethodNotAllowedError) return ociError('UNSUPPORTED', { method: error.method })
  if (error instanceof RequestNotValidError) return ociValidationError(error.issues)
  if (error instanceof InvalidJsonError) return { status, body: ociError('MANIFEST_INVALID', { reason: 'invalid JSON' }).body }
  if (error instanceof PayloadTooLargeError) return { status, body: ociError('MANIFEST_INVALID', { reason: 'entity.too.large' }).body }
  if (error instanceof UnreadableBodyError) return { status, body: ociError('MANIFEST_INVALID', { reason: error.type ?? 'unreadable body' }).body }
  if (isRouterRefusal(error)) return { status, body: ociError('UNKNOWN', { reason: (error as BaseError).code }, (error as BaseError).shortMessage).body }
  return undefined
}

/**
 * Ollama phrases a missing model as `model is required`; otherwise the first schema error. A body that names its
 * model by `model` or `name` and has neither usable (`{"model": null}`) fails the document's only top-level `anyOf`.
 * A create with nothing to make the model of (no `from`, no `files`: CreateRequest's if/then, which asks for
 * `files` once `from` is missing) is Ollama's `neither 'from' or 'files' was specified`.
 */
function ollamaValidationMessage(issues: ReadonlyArray<RequestValidationIssue>): string {
  const first = issues[0]
  if (!first) return 'invalid request'
  const text = `${first.location}${first.path ? ` ${first.path}` : ''}: ${first.message}`
  if (/required property 'model'/.test(first.message) || (first.path === 'model' && /required/.test(first.message))) {
    return 'model is required'
  }
  if (issues.some((i) => i.location === 'body' && i.path === '/' && /schema in anyOf/.test(i.message))) return 'model is required'
  if (first.location === 'body' && first.path === '/files' && /required property 'files'|fewer than 1 properties|^must be object$/.test(first.message)) {
    return "neither 'from' or 'files' was specified"
  }
  return text
}
