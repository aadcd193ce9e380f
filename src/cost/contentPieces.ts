/**
 * How many pieces of generated content one event of a streamed answer carries — the measure a stream that
 * ends without its usage (cut by the client, or by a failing model server) is charged by, one token per
 * piece (issue 31 item 3: "a stream cut short pays for what was sent").
 *
 * Only events that carry generated text count. Framing never does: Anthropic's `message_start`,
 * `content_block_start`/`_stop`, `ping`, `message_delta`, `message_stop`; the Responses API's
 * `response.created`, `response.in_progress`, `response.output_item.*`, `response.content_part.*`, `*.done`;
 * a chat completion's role-only first chunk, its `finish_reason` chunk and its usage chunk; Ollama's `done`
 * line; error events. Counting every event charged the payer of a cut Messages or Responses stream for its
 * framing as if it were tokens (a Messages stream sends three framing events before its first token, three after its last).
 *
 * Shapes, each as its public API streams it (the model server behind the gateway may be Ollama or ours):
 * - Anthropic Messages: `content_block_delta` whose delta is `text_delta`, `thinking_delta` or
 *   `input_json_delta` with something in it (`signature_delta` and `citations_delta` are not generated text).
 * - OpenAI Responses: any `response.….delta` event with a non-empty `delta` (output text, refusal, reasoning
 *   text and summary, function-call arguments, …).
 * - OpenAI chat completions: each choice whose `delta` has content, reasoning, a refusal or tool calls; text
 *   completions: each choice with `text`.
 * - Ollama and the gateway's NDJSON chunks: `response`, `thinking`, `message.content`, `message.thinking` or
 *   `message.tool_calls` non-empty.
 *
 * A piece is at least one token, often exactly one (our model server and Ollama send one event per token);
 * a tool call that arrives whole in one event counts as one — the operator is then paid less than the model
 * produced, never the payer charged for what was not sent.
 */
export function contentPiecesOf(event: unknown): number {
  if (!isObject(event)) return 0
  const type = typeof event.type === 'string' ? event.type : undefined
  if (type !== undefined) {
    if (type === 'content_block_delta') return anthropicDelta(event.delta) ? 1 : 0
    if (type.startsWith('response.')) return type.endsWith('.delta') && filled(event.delta) ? 1 : 0
    // Any other typed event (Anthropic's and the Responses API's framing, their error events) carries no text.
    return 0
  }
  if (Array.isArray(event.choices)) {
    let pieces = 0
    for (const choice of event.choices) if (isObject(choice) && (chatDelta(choice.delta) || filled(choice.text))) pieces++
    return pieces
  }
  // Ollama `/api/generate` and `/api/chat` lines, and the gateway's chunks of the same shapes.
  if (filled(event.response) || filled(event.thinking)) return 1
  const message = event.message
  return isObject(message) && (filled(message.content) || filled(message.thinking) || nonEmptyArray(message.tool_calls)) ? 1 : 0
}

function anthropicDelta(delta: unknown): boolean {
  if (!isObject(delta)) return false
  switch (delta.type) {
    case 'text_delta':
      return filled(delta.text)
    case 'thinking_delta':
      return filled(delta.thinking)
    case 'input_json_delta':
      return filled(delta.partial_json)
    default:
      return false
  }
}

function chatDelta(delta: unknown): boolean {
  if (!isObject(delta)) return false
  return filled(delta.content) || filled(delta.reasoning) || filled(delta.reasoning_content) || filled(delta.refusal) || nonEmptyArray(delta.tool_calls)
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const filled = (v: unknown): boolean => typeof v === 'string' && v !== ''
const nonEmptyArray = (v: unknown): boolean => Array.isArray(v) && v.length > 0
