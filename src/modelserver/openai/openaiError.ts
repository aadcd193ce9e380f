import { openAiErrorBody, type OpenAiErrorBody } from '../../shared/errorShapes/apiErrorBodies.js'
import type { HttpResult } from '../../shared/http/index.js'
import { ModelServerError } from '../errors.js'

/** Ollama's mapping of a status to OpenAI's error `type`. */
export function openaiErrorType(status: number): string {
  if (status === 400) return 'invalid_request_error'
  if (status === 404) return 'not_found_error'
  return 'api_error'
}

export function openaiErrorBody(status: number, message: string, code: string | null = null, param: string | null = null): OpenAiErrorBody {
  return openAiErrorBody(message, openaiErrorType(status), code, param)
}

/** The routes that answer OpenAI's error shape. */
export function isOpenAIPath(path: string): boolean {
  return path === '/v1' || path.startsWith('/v1/')
}

/**
 * An Ollama-shaped error result (`{error: "…"}`) in OpenAI's shape, same status. `code` is the thrown error's
 * code when it is one of ours (500s keep none: they are not the client's to act on), `param` the field at fault.
 */
export function toOpenAIError(result: HttpResult, error?: unknown): HttpResult {
  const body = result.body as { error?: unknown } | undefined
  const message = typeof body?.error === 'string' ? body.error : 'internal error'
  const ours = error instanceof ModelServerError || (error instanceof Error && typeof (error as { code?: unknown }).code === 'string')
  const code = ours && result.status < 500 ? String((error as { code: string }).code) : result.status === 503 ? 'server_busy' : null
  const param = error instanceof ModelServerError && typeof error.meta?.param === 'string' ? error.meta.param : null
  return { ...result, body: openaiErrorBody(result.status, message, code, param) }
}

/** A 400 naming the request field at fault (OpenAI's `param`). */
export function invalidParam(param: string, message: string): ModelServerError {
  return new ModelServerError('invalid_request', message, { meta: { param } })
}
