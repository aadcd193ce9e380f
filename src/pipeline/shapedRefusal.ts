import { anthropicErrorBody, openAiErrorBody, openAiParamOf } from '../shared/errorShapes/apiErrorBodies.js'
import type { UnroutedResult } from '../shared/http/index.js'
import type { ErrorShape } from './shapedAuthRequired.js'

/**
 * A refusal in the gateway's plain `Error` body (`{error: code, message, details?}`), on a route of another
 * API family (its 401 declares `x-error-shape`: the OpenAI-compatible `/llm/v1` routes, Anthropic's
 * `/llm/v1/messages`), in that family's error body — what its SDK shows: OpenAI's with the catalogue's code as
 * `code` and the field at fault of an invalid request as `param`, Anthropic's with the type its status means. The
 * status and headers (`Retry-After`) stay. A 402 keeps the body the document gives every cost call's 402 — x402's,
 * which a paying client reads (it comes with its own body and is never reshaped), or `QuotaExceeded` where paying
 * is off (plain, so it is kept here).
 */
export function shapedRefusal(shape: ErrorShape, result: UnroutedResult, error: unknown): UnroutedResult {
  if (result.status === 402) return result
  const { error: code, message } = result.body as { error: string; message: string }
  if (shape === 'anthropic') return { ...result, body: anthropicErrorBody(result.status, message), component: 'AnthropicError' }
  return { ...result, body: openAiErrorBody(message, result.status >= 500 ? 'server_error' : 'invalid_request_error', code, openAiParamOf(error)), component: 'OpenAiError' }
}
