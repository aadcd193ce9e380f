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

/**
 * Server-sent events with names, as OpenAI's Responses API and Anthropic's Messages API stream them:
 * `event: <type>` and `data: <JSON>` per event (the event's `type` names it); no trailer — the last event
 * (`response.completed`, `message_stop`, or the error event) ends the stream.
 */
export function namedSseFraming(errorBody: (message: string) => { type: string }): StreamFraming {
  return {
    contentType: 'text/event-stream',
    frame: (value) => `event: ${(value as { type: string }).type}\ndata: ${JSON.stringify(value)}\n\n`,
    errorBody,
  }
}
