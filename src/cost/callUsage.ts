/** Tokens, model and eval rate read from an answer of the model server or the gateway. */
export type CallUsage = {
  model?: string
  promptTokens?: number
  completionTokens?: number
  /** Seconds the model spent generating `completionTokens` (when the answer reports it). */
  evalSeconds?: number
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)

/** The Responses API events whose `response.usage` is what the call produced. */
const FINAL_RESPONSE_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/**
 * The usage fields every answer shape carries: Ollama's and the gateway's (`prompt_eval_count`,
 * `eval_count`, `eval_duration` in ns or `eval_duration_ms`), OpenAI's chat completions (`usage.prompt_tokens`,
 * `usage.completion_tokens`), and Anthropic Messages' and OpenAI Responses' (`usage.input_tokens`,
 * `usage.output_tokens`). In the last two's streams the usage rides in an event's `message` (`message_start`)
 * or `response` (`response.completed`, `response.incomplete`); `message_delta` carries it at the top.
 * Without these, a `/v1/messages` or `/v1/responses` call paid with `upto` settled the minimum (a whole answer:
 * no tokens read) or one token per SSE event (a stream), not the tokens produced.
 */
export function usageOf(value: unknown): CallUsage {
  if (typeof value !== 'object' || value === null) return {}
  const o = value as Record<string, unknown>
  const event = typeof o.type === 'string' ? o.type : ''
  const wrapped = event === 'message_start' ? o.message : event.startsWith('response.') ? o.response : undefined
  if (typeof wrapped === 'object' && wrapped !== null) {
    const inner = usageOf(wrapped)
    // message_start's counts, and those a Responses stream's opening events may carry, are where the stream
    // starts (0), not what it produced: only the final event's count is the model server's count of the call.
    if (!FINAL_RESPONSE_EVENTS.has(event)) {
      delete inner.promptTokens
      delete inner.completionTokens
    }
    return inner
  }
  const usage = (typeof o.usage === 'object' && o.usage !== null ? o.usage : {}) as Record<string, unknown>
  const out: CallUsage = {}
  if (typeof o.model === 'string' && o.model !== '') out.model = o.model
  const prompt = num(o.prompt_eval_count) ?? num(usage.prompt_tokens) ?? num(usage.input_tokens)
  const completion = num(o.eval_count) ?? num(usage.completion_tokens) ?? num(usage.output_tokens)
  if (prompt !== undefined) out.promptTokens = prompt
  if (completion !== undefined) out.completionTokens = completion
  const evalMs = num(o.eval_duration_ms)
  const evalNs = num(o.eval_duration)
  if (evalMs !== undefined && evalMs > 0) out.evalSeconds = evalMs / 1000
  else if (evalNs !== undefined && evalNs > 0) out.evalSeconds = evalNs / 1e9
  return out
}

/**
 * Reads a streamed answer as it passes — NDJSON lines (Ollama, the gateway's chunks) or SSE `data:` events
 * (OpenAI, Anthropic) — without holding any of it back: the final usage, the model, an error line, the number
 * of events. A stream that ends without its final usage has no count here: nothing is estimated from its
 * pieces (a tool call sent whole in one event is hundreds of tokens).
 */
export class StreamUsageScanner {
  usage: CallUsage = {}
  /** Data events (lines) read, framing included; 0 at the end: the stream produced nothing. */
  chunks = 0
  /** The stream carried an `{error, message}` line (it failed after it started). */
  errored = false
  #partial = ''
  readonly #decoder = new TextDecoder()

  feed(chunk: string | Uint8Array): void {
    const text = this.#partial + (typeof chunk === 'string' ? chunk : this.#decoder.decode(chunk, { stream: true }))
    const lines = text.split('\n')
    this.#partial = lines.pop() ?? ''
    for (const line of lines) this.#line(line)
  }

  end(): void {
    if (this.#partial !== '') this.#line(this.#partial)
    this.#partial = ''
  }

  #line(raw: string): void {
    let line = raw.trim()
    if (line === '') return
    if (line.startsWith('data:')) line = line.slice(5).trim()
    else if (line.startsWith('event:') || line.startsWith(':') || line.startsWith('id:')) return
    if (line === '[DONE]' || !line.startsWith('{')) return
    // Every line is parsed: what an event carries is decided by its structure, never by a substring that the
    // generated text (which the caller's prompt steers) could contain.
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      this.chunks++
      return
    }
    const o = value as Record<string, unknown>
    if (o.error !== undefined && o.error !== null && o.model === undefined && o.choices === undefined) {
      this.errored = true
      return
    }
    this.chunks++
    const u = usageOf(o)
    this.usage = { ...this.usage, ...u }
  }
}
