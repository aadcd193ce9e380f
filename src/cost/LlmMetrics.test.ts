import { describe, expect, it } from 'vitest'
import { LlmMetrics } from './LlmMetrics.js'

describe('LlmMetrics', () => {
  it('labels by model with a bounded set: the configured models, the first 16 others that answered, then other', async () => {
    const m = new LlmMetrics(['chat:latest', 'embed:latest'])
    const call = (model: string) => m.observeCall({ model, paidBy: 'quota', outcome: 'ok', ttftS: 0.01, tokensPerS: 100, promptTokens: 1, completionTokens: 2 })
    for (let i = 0; i < 40; i++) call(`m${i}`)
    call('chat:latest')
    const text = await m.registry.metrics()
    const labels = new Set([...text.matchAll(/llm_time_to_first_token_seconds_count\{model="([^"]+)"\}/g)].map((x) => x[1]))
    expect(labels.size).toBe(18)
    expect(labels).toContain('chat:latest')
    expect(labels).toContain('m15')
    expect(labels).not.toContain('m16')
    expect(labels).toContain('other')
    expect(text).toMatch(/llm_time_to_first_token_seconds_count\{model="other"\} 24/)
  })

  it('observes durations of successful calls only', async () => {
    const m = new LlmMetrics(['chat:latest'])
    m.observeCall({ model: 'chat:latest', paidBy: 'payment', outcome: 'error', ttftS: 0.5, tokensPerS: 10, promptTokens: 1, completionTokens: 1 })
    const text = await m.registry.metrics()
    expect(text).not.toMatch(/llm_time_to_first_token_seconds_count\{/)
    expect(text).toMatch(/llm_cost_calls_total\{paid_by="payment",outcome="error"\} 1/)
  })
})
