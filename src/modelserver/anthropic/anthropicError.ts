import type { HttpResult } from '../../shared/http/index.js'

/** Anthropic's error body (`{type: "error", error: {type, message}}`), as the Anthropic SDKs read it. */
export type AnthropicErrorBody = { type: 'error'; error: { type: string; message: string } }

/** Anthropic's error `type` for a status. */
export function anthropicErrorType(status: number): string {
  if (status === 400 || status === 422) return 'invalid_request_error'
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 404) return 'not_found_error'
  if (status === 413) return 'request_too_large'
  if (status === 429) return 'rate_limit_error'
  if (status === 503) return 'overloaded_error'
  return 'api_error'
}

export function anthropicErrorBody(status: number, message: string): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicErrorType(status), message } }
}

/** An Ollama-shaped error result (`{error: "…"}`) in Anthropic's shape, same status. */
export function toAnthropicError(result: HttpResult): HttpResult {
  const body = result.body as { error?: unknown } | undefined
  const message = typeof body?.error === 'string' ? body.error : 'internal error'
  return { ...result, body: anthropicErrorBody(result.status, message) }
}
