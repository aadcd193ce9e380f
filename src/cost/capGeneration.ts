/** How a route's request body names its most completion tokens. */
export type GenerationLimitField = 'num_predict' | 'max_tokens' | 'max_output_tokens'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The smaller of a requested limit (absent, null, negative or 0 = none: Ollama's -1 is "no limit") and the cap. */
function capped(requested: unknown, maxTokens: number): number {
  return typeof requested === 'number' && Number.isFinite(requested) && requested > 0 ? Math.min(Math.floor(requested), maxTokens) : maxTokens
}

/**
 * A copy of `body` whose generation stops at `maxTokens` completion tokens (an x402 `upto` payment pays for no
 * more): Ollama's `options.num_predict`, OpenAI's `max_tokens` / `max_completion_tokens` (both, when both are
 * given: the model server honours either; Anthropic's Messages name it `max_tokens` too), the Responses API's
 * `max_output_tokens`. A smaller limit the caller asked for stays.
 */
export function capGeneration(body: unknown, field: GenerationLimitField, maxTokens: number): unknown {
  if (!isObject(body)) return body
  if (field === 'num_predict') {
    const options = isObject(body.options) ? body.options : {}
    return { ...body, options: { ...options, num_predict: capped(options.num_predict, maxTokens) } }
  }
  if (field === 'max_output_tokens') return { ...body, max_output_tokens: capped(body.max_output_tokens, maxTokens) }
  const out: Record<string, unknown> = { ...body, max_tokens: capped(body.max_tokens, maxTokens) }
  if (body.max_completion_tokens !== undefined && body.max_completion_tokens !== null) out.max_completion_tokens = capped(body.max_completion_tokens, maxTokens)
  return out
}
