import type { ChatCompletionRequest, CompletionRequest } from '../../../generated/modelserver/types.gen.js'

type SamplingFields = Pick<
  ChatCompletionRequest & CompletionRequest,
  'max_tokens' | 'temperature' | 'top_p' | 'seed' | 'stop' | 'frequency_penalty' | 'presence_penalty'
> & { max_completion_tokens?: number | null | undefined }

/**
 * OpenAI's sampling fields as Ollama `options` (as Ollama maps them): `max_completion_tokens` (else
 * `max_tokens`) → `num_predict`, the others by the same name. Absent or null fields are left out, so the
 * model's stored parameters and the engine's defaults apply as on `/api/*`.
 */
export function optionsOf(body: SamplingFields): Record<string, unknown> {
  const options: Record<string, unknown> = {}
  const set = (key: string, value: unknown) => {
    if (value !== undefined && value !== null) options[key] = value
  }
  set('num_predict', body.max_completion_tokens ?? body.max_tokens)
  set('temperature', body.temperature)
  set('top_p', body.top_p)
  set('seed', body.seed)
  set('stop', body.stop)
  set('frequency_penalty', body.frequency_penalty)
  set('presence_penalty', body.presence_penalty)
  return options
}
