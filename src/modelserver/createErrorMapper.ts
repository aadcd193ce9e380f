import type { Logger } from 'pino'
import { BaseError } from '../shared/errors/BaseError.js'
import type { HttpResult } from '../shared/http/index.js'
import { toAnthropicError } from './anthropic/anthropicError.js'
import { EngineError, engineErrorStatus } from './engine/errors.js'
import { INTERNAL_ERROR_MESSAGE, modelServerErrorStatus } from './errors.js'
import type { ErrorShape } from './errorShapes.js'
import { isOpenAIPath, openaiErrorBody, toOpenAIError } from './openai/openaiError.js'
import { ociErrorFor } from './registry/ociErrors.js'
import { openAiParamOf } from '../shared/errorShapes/apiErrorBodies.js'
import { isRouterRefusal, ociRefusal, refusalMessage } from './refusalWording.js'

/**
 * A thrown or given-back error → the route's error answer: `operationId` the route's (or the one the request would
 * have reached, for an error before the route); `path` decides the shape of a path no operation has.
 */
export type ErrorMapper = (error: unknown, operationId: string | undefined, path?: string) => HttpResult & { component?: string }

/** The OCI distribution routes (`/v2/...`): their errors have the distribution specification's shape. */
function isRegistryPath(p: string): boolean {
  return p === '/v2' || p.startsWith('/v2/')
}

/** A path no operation has declares nothing: its shape is the family's, by prefix (`/v1` OpenAI, `/v2` OCI). */
function shapeOfUnroutedPath(path: string): ErrorShape {
  return isRegistryPath(path) ? 'oci' : isOpenAIPath(path) ? 'openai' : 'ollama'
}

/**
 * The model server's one error path: every refusal — a handler's, the engine's, the router's (no route, an invalid
 * request or body: `src/shared/http/routerRefusals.ts`), the guards' (a refused key or browser) — and every
 * unexpected error is answered here. Our own errors keep their status (`modelServerErrorStatus`) and their
 * message, anything else is a 500 with a generic message (its details, paths included, go to the server log
 * only). Each route answers the shape the document declares for it (`shapeOf`: Ollama, OpenAI, Anthropic or the
 * registry's OCI); what the error carries for the answer (`WWW-Authenticate`, an empty body) is kept. Known
 * server directories are scrubbed from every message a client gets.
 */
export function createErrorMapper(logger: Logger | undefined, redact: (text: string) => string = (t) => t, shapeOf: (operationId: string | undefined) => ErrorShape = () => 'ollama'): ErrorMapper {
  const components = { ollama: 'Error', openai: 'OpenAIError', anthropic: 'AnthropicError', oci: 'RegistryError' } as const satisfies Record<ErrorShape, string>
  const render = renderError(logger, redact)
  return (error, operationId, path) => {
    const shape = operationId === undefined && path !== undefined ? shapeOfUnroutedPath(path) : shapeOf(operationId)
    const answer = error instanceof BaseError ? error.answer : undefined
    // an answer without a body (Ollama's empty 403 to a refused browser), whatever the route's shape
    if (answer?.empty) return { status: statusOf(error) ?? 500, ...(answer.headers ? { headers: { ...answer.headers } } : {}) }
    const result = render(error, operationId, shape)
    // the headers the error carries (`WWW-Authenticate` of a refused key, `Allow` of a 405); a path no operation has: the body's schema
    const headers = answer?.headers
    return { ...result, ...(headers ? { headers: { ...result.headers, ...headers } } : {}), ...(operationId === undefined ? { component: components[shape] } : {}) }
  }
}

/** The status of an error of ours: the engine's table for the engine's, the model server's for every other code (a `ModelServerError`'s among them); `undefined` for anything else. */
function statusOf(error: unknown): number | undefined {
  if (error instanceof EngineError) return engineErrorStatus[error.code] ?? 500
  if (error instanceof BaseError && Object.hasOwn(modelServerErrorStatus, error.code)) return modelServerErrorStatus[error.code as keyof typeof modelServerErrorStatus]
  return undefined
}

/** The error's status and message (ours, or a generic 500 logged in full) in `shape`, the server's paths redacted. */
function renderError(logger: Logger | undefined, redact: (text: string) => string) {
  return (error: unknown, operationId: string | undefined, shape: ErrorShape): HttpResult => {
    const known = statusOf(error)
    const status = known ?? 500
    let message = known !== undefined && error instanceof BaseError ? refusalMessage(error) : INTERNAL_ERROR_MESSAGE
    if (status >= 500) logger?.error({ err: error, operationId }, message === INTERNAL_ERROR_MESSAGE ? 'unhandled error' : message)
    message = redact(message)
    if (shape === 'oci') {
      const result = ociRefusal(error, status) ?? ociErrorFor(error, message)
      return { ...result, body: JSON.parse(redact(JSON.stringify(result.body))) as unknown }
    }
    // the router's own refusals carry no code of OpenAI's; `param` names the field at fault of an invalid request
    if (shape === 'openai') return isRouterRefusal(error) ? { status, body: openaiErrorBody(status, message, null, openAiParamOf(error)) } : toOpenAIError({ status, body: { error: message } }, error)
    if (shape === 'anthropic') return toAnthropicError({ status, body: { error: message } })
    return { status, body: { error: message } }
  }
}
