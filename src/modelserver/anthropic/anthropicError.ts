import { anthropicErrorBody } from '../../shared/errorShapes/apiErrorBodies.js'
import type { HttpResult } from '../../shared/http/index.js'

export { anthropicErrorBody } from '../../shared/errorShapes/apiErrorBodies.js'

/** An Ollama-shaped error result (`{error: "…"}`) in Anthropic's shape, same status. */
export function toAnthropicError(result: HttpResult): HttpResult {
  const body = result.body as { error?: unknown } | undefined
  const message = typeof body?.error === 'string' ? body.error : 'internal error'
  return { ...result, body: anthropicErrorBody(result.status, message) }
}
