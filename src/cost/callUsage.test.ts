import { describe, expect, it } from 'vitest'
import { StreamUsageScanner, usageOf } from './callUsage.js'

describe('usageOf', () => {
  it('reads Ollama, gateway and OpenAI usage', () => {
    expect(usageOf({ model: 'm', prompt_eval_count: 3, eval_count: 7, eval_duration: 2e8 })).toEqual({ model: 'm', promptTokens: 3, completionTokens: 7, evalSeconds: 0.2 })
    expect(usageOf({ prompt_eval_count: 3, eval_count: 7, eval_duration_ms: 50 })).toMatchObject({ evalSeconds: 0.05 })
    expect(usageOf({ model: 'x', usage: { prompt_tokens: 9, completion_tokens: 2 } })).toEqual({ model: 'x', promptTokens: 9, completionTokens: 2 })
    expect(usageOf('text')).toEqual({})
  })

  it('reads Anthropic Messages and OpenAI Responses usage (input_tokens, output_tokens), whole and in their stream events', () => {
    expect(usageOf({ type: 'message', model: 'a', usage: { input_tokens: 8, output_tokens: 5 } })).toEqual({ model: 'a', promptTokens: 8, completionTokens: 5 })
    expect(usageOf({ object: 'response', model: 'r', usage: { input_tokens: 6, output_tokens: 4, total_tokens: 10 } })).toEqual({ model: 'r', promptTokens: 6, completionTokens: 4 })
    // message_start's zeros are not what the stream produced; message_delta's counts are
    expect(usageOf({ type: 'message_start', message: { model: 'a', usage: { input_tokens: 0, output_tokens: 0 } } })).toEqual({ model: 'a' })
    expect(usageOf({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { input_tokens: 8, output_tokens: 12 } })).toEqual({ promptTokens: 8, completionTokens: 12 })
    expect(usageOf({ type: 'response.completed', response: { model: 'r', usage: { input_tokens: 6, output_tokens: 3 } } })).toEqual({ model: 'r', promptTokens: 6, completionTokens: 3 })
    expect(usageOf({ type: 'response.created', response: { model: 'r' } })).toEqual({ model: 'r' })
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
    const m = new StreamUsageScanner()
    m.feed('event: message_start\ndata: {"type":"message_start","message":{"model":"a","usage":{"input_tokens":0,"output_tokens":0}}}\n\nevent: ping\ndata: {"type":"ping"}\n\n')
    m.feed('data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}\n\n')
    expect(m.usage.completionTokens).toBeUndefined() // cut here: no count (message_start says where it starts)
    m.feed('data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":7,"output_tokens":12}}\n\ndata: {"type":"message_stop"}\n\n')
    expect(m.usage).toEqual({ model: 'a', promptTokens: 7, completionTokens: 12 })
    const e = new StreamUsageScanner()
    e.feed('{"error":"modelserver_unavailable","message":"gone"}\n')
    expect(e.errored).toBe(true)
    expect(e.chunks).toBe(0)
  })
})
