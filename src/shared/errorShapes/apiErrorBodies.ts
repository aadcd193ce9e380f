/**
 * The error bodies of the two API families both programs speak besides their own: OpenAI's
 * (`{error: {message, type, param, code}}`, what the `openai` SDKs read) and Anthropic's
 * (`{type: "error", error: {type, message}}`, what the Anthropic SDKs read). The gateway renders its catalogue's
 * refusals in them on the routes that declare them; the model server renders its own.
 */
import { RequestNotValidError } from '../http/routerRefusals.js'

/** OpenAI's error body. */
export type OpenAiErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } }

/** Anthropic's error body. */
export type AnthropicErrorBody = { type: 'error'; error: { type: string; message: string } }

export function openAiErrorBody(message: string, type: string, code: string | null = null, param: string | null = null): OpenAiErrorBody {
  return { error: { message, type, param, code } }
}

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

/** OpenAI's `param` of a refusal: for a request the document refuses, the body field at fault (`messages[0].role`); else `null`. */
export function openAiParamOf(error: unknown): string | null {
  if (!(error instanceof RequestNotValidError)) return null
  const first = error.issues[0]
  if (!first || first.location !== 'body' || !first.path || first.path === '/') return null
  return first.path
    .replace(/^\//, '')
    .split('/')
    .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('')
}
