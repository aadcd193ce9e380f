import { describe, expect, it } from 'vitest'
import { StreamUsageScanner, usageOf } from './callUsage.js'

describe('usageOf', () => {
  it('reads Ollama, gateway and OpenAI usage', () => {
    expect(usageOf({ model: 'm', prompt_eval_count: 3, eval_count: 7, eval_duration: 2e8 })).toEqual({ model: 'm', promptTokens: 3, completionTokens: 7, evalSeconds: 0.2 })
    expect(usageOf({ prompt_eval_count: 3, eval_count: 7, eval_duration_ms: 50 })).toMatchObject({ evalSeconds: 0.05 })
    expect(usageOf({ model: 'x', usage: { prompt_tokens: 9, completion_tokens: 2 } })).toEqual({ model: 'x', promptTokens: 9, completionTokens: 2 })
    expect(usageOf('text')).toEqual({})
  })
})

describe('StreamUsageScanner', () => {
  it('finds the final usage of an NDJSON stream split anywhere', () => {
    const text = '{"model":"m","message":{"content":"a"},"done":false}\n{"model":"m","done":true,"prompt_eval_count":4,"eval_count":2,"eval_duration_ms":10}\n'
    const s = new StreamUsageScanner()
    const bytes = new TextEncoder().encode(text)
    for (let i = 0; i < bytes.length; i += 7) s.feed(bytes.subarray(i, i + 7))
    s.end()
    expect(s.usage).toMatchObject({ model: 'm', promptTokens: 4, completionTokens: 2, evalSeconds: 0.01 })
    expect(s.chunks).toBe(2)
    expect(s.errored).toBe(false)
  })

  it('reads SSE data events, ignores [DONE], and tells an error line', () => {
    const s = new StreamUsageScanner()
    s.feed('data: {"model":"m","choices":[{"delta":{"content":"a"}}]}\n\ndata: {"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}\n\ndata: [DONE]\n\n')
    expect(s.usage).toMatchObject({ promptTokens: 5, completionTokens: 1 })
    const e = new StreamUsageScanner()
    e.feed('{"error":"modelserver_unavailable","message":"gone"}\n')
    expect(e.errored).toBe(true)
    expect(e.chunks).toBe(0)
  })
})
