/** Tokens, model and eval rate read from an answer of the model server or the gateway. */
export type CallUsage = {
  model?: string
  promptTokens?: number
  completionTokens?: number
  /** Seconds the model spent generating `completionTokens` (when the answer reports it). */
  evalSeconds?: number
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined)

/**
 * The usage fields every answer shape carries: Ollama's and the gateway's (`prompt_eval_count`,
 * `eval_count`, `eval_duration` in ns or `eval_duration_ms`) and OpenAI's (`usage.prompt_tokens`,
 * `usage.completion_tokens`).
 */
export function usageOf(value: unknown): CallUsage {
  if (typeof value !== 'object' || value === null) return {}
  const o = value as Record<string, unknown>
  const usage = (typeof o.usage === 'object' && o.usage !== null ? o.usage : {}) as Record<string, unknown>
  const out: CallUsage = {}
  if (typeof o.model === 'string' && o.model !== '') out.model = o.model
  const prompt = num(o.prompt_eval_count) ?? num(usage.prompt_tokens)
  const completion = num(o.eval_count) ?? num(usage.completion_tokens)
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
 * (OpenAI) — without holding any of it back: the final usage, the model, an error line, and the number of
 * content chunks (the completion token count when the stream reports none).
 */
export class StreamUsageScanner {
  usage: CallUsage = {}
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
    // Only the lines that can carry usage, a model name or an error are parsed; the rest are counted.
    const interesting = this.chunks === 0 || line.includes('"error"') || line.includes('"done":true') || line.includes('"usage"') || line.includes('eval_count')
    this.chunks++
    if (!interesting) return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      return
    }
    const o = value as Record<string, unknown>
    if (o.error !== undefined && o.error !== null && o.model === undefined && o.choices === undefined) {
      this.errored = true
      this.chunks--
      return
    }
    const u = usageOf(o)
    this.usage = { ...this.usage, ...u }
  }
}
