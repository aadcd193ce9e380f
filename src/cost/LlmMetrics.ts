import { Counter, Histogram, Registry } from 'prom-client'

/** Label values beyond the configured models: the first models that answered, up to this many; then `other`. */
const MAX_MODELS = 16

/**
 * LLM metrics of `/metrics` (issue 14 item 4): time to first token and tokens per second per model, tokens
 * and cost calls. The `model` label takes only known names — the configured chat and embedding models and
 * the first `MAX_MODELS` models that actually answered a call (a model the model server does not have never
 * answers) — and `other` beyond, so a caller cannot grow the label set.
 */
export class LlmMetrics {
  readonly registry = new Registry()
  readonly #known: Set<string>
  readonly #ttft = new Histogram({
    name: 'llm_time_to_first_token_seconds',
    help: 'Streamed cost calls: time from the request to the first chunk of the answer, by model.',
    labelNames: ['model'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  })
  readonly #tps = new Histogram({
    name: 'llm_tokens_per_second',
    help: 'Generated tokens per second of a cost call (the model server’s eval rate when it reports one), by model.',
    labelNames: ['model'],
    buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
    registers: [this.registry],
  })
  readonly #tokens = new Counter({
    name: 'llm_tokens_total',
    help: 'Tokens of cost calls, by model and kind (prompt, completion).',
    labelNames: ['model', 'kind'],
    registers: [this.registry],
  })
  readonly #calls = new Counter({
    name: 'llm_cost_calls_total',
    help: 'Metered calls by how they were paid (quota, payment, overlord, free) and outcome (ok, error, cancelled).',
    labelNames: ['paid_by', 'outcome'],
    registers: [this.registry],
  })

  constructor(configuredModels: string[]) {
    this.#known = new Set(configuredModels.filter((m) => m !== ''))
    this.#baseline = this.#known.size
  }

  readonly #baseline: number

  /** The label value for `model`. */
  label(model: string): string {
    if (this.#known.has(model)) return model
    if (this.#known.size - this.#baseline < MAX_MODELS && model !== '' && model.length <= 128) {
      this.#known.add(model)
      return model
    }
    return 'other'
  }

  observeCall(c: {
    model: string
    paidBy: string
    outcome: string
    ttftS: number | null
    tokensPerS: number | null
    promptTokens: number
    completionTokens: number
  }): void {
    this.#calls.inc({ paid_by: c.paidBy, outcome: c.outcome })
    if (c.outcome !== 'ok') return
    const model = this.label(c.model)
    if (c.ttftS !== null) this.#ttft.observe({ model }, c.ttftS)
    if (c.tokensPerS !== null && Number.isFinite(c.tokensPerS) && c.tokensPerS > 0) this.#tps.observe({ model }, c.tokensPerS)
    if (c.promptTokens > 0) this.#tokens.inc({ model, kind: 'prompt' }, c.promptTokens)
    if (c.completionTokens > 0) this.#tokens.inc({ model, kind: 'completion' }, c.completionTokens)
  }
}
