import type { StreamFraming } from './NdjsonChannel.js'

/**
 * Server-sent events as OpenAI streams them: `data: <JSON>` and a blank line per chunk, `data: [DONE]` last
 * (also after a mid-stream error, which is one `data: {"error": {...}}` event).
 */
export function sseFraming(errorBody: (message: string) => unknown): StreamFraming {
  return {
    contentType: 'text/event-stream',
    frame: (value) => `data: ${JSON.stringify(value)}\n\n`,
    trailer: 'data: [DONE]\n\n',
    errorBody,
  }
}
