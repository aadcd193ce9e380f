/**
 * The Ollama 0.33 surfaces of the model server: `/v1/responses`, `/v1/messages`, `/api/status`, `think: "max"`, `truncate` /
 * `shift`, and `tool_choice` enforced by grammar on every surface — with raw HTTP (the event sequences, the error
 * shapes). Every JSON response is validated against openapi/modelserver.yaml by the server itself (validation mode
 * `error`); every streamed event here with the schemas generated from the document. The stock clients are in
 * `tests/llm/stockClients.test.ts`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { zAnthropicError, zAnthropicStreamEvent, zOpenAiError, zResponseStreamEvent } from '../../generated/modelserver/zod.gen.js'
import { createEngine } from './engine/createEngine.js'
import type { Engine } from './engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'

let engine: Engine
let ms: TestModelServer

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
})

afterAll(async () => {
  await ms?.close()
  await engine?.dispose()
})

afterEach(() => {
  expect(ms.mismatches).toEqual([])
})

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${ms.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })

/** Named SSE events: each `event:` name must equal its data's `type`. */
async function namedEvents(res: Response): Promise<Array<{ type: string } & Record<string, unknown>>> {
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
  const text = await res.text()
  return text
    .split('\n\n')
    .filter((e) => e.trim() !== '')
    .map((e) => {
      const [eventLine, dataLine] = e.split('\n')
      expect(eventLine).toMatch(/^event: /)
      const data = JSON.parse(dataLine!.slice('data: '.length)) as { type: string }
      expect(eventLine!.slice('event: '.length)).toBe(data.type)
      return data
    })
}

const weather = { type: 'object', required: ['city'], properties: { city: { type: 'string' } } }
const time = { type: 'object', required: ['zone'], properties: { zone: { type: 'string', enum: ['UTC', 'CET'] } } }

describe('POST /v1/responses', () => {
  it('answers a response object: one message with output_text, usage, store false', async () => {
    const res = await post('/v1/responses', { model: 'svc-tiny-chat', instructions: 'Be terse.', input: 'Hello!', max_output_tokens: 8, seed: 1, temperature: 0 })
    expect(res.status).toBe(200)
    const r = (await res.json()) as Record<string, any>
    expect(r.object).toBe('response')
    expect(r.id).toMatch(/^resp_/)
    expect(r.store).toBe(false)
    expect(['completed', 'incomplete']).toContain(r.status)
    expect(r.output[0].type).toBe('message')
    expect(r.output_text).toBe(r.output[0].content[0].text)
    expect(r.usage.total_tokens).toBe(r.usage.input_tokens + r.usage.output_tokens)
    expect(r.usage.output_tokens).toBeLessThanOrEqual(8)
  })

  it('max_output_tokens reached: status incomplete, reason max_output_tokens', async () => {
    const r = (await (await post('/v1/responses', { model: 'svc-tiny-chat', input: 'Tell me a story', max_output_tokens: 2, seed: 3 })).json()) as Record<string, any>
    expect(r.usage.output_tokens).toBe(2)
    expect(r.status).toBe('incomplete')
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' })
  })

  it('streams OpenAI’s event sequence, deltas adding up to the final text', async () => {
    const events = await namedEvents(await post('/v1/responses', { model: 'svc-tiny-chat', input: 'Hello!', max_output_tokens: 12, seed: 5, stream: true }))
    for (const e of events) zResponseStreamEvent.parse(e)
    const types = events.map((e) => e.type)
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added'])
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', types.at(-1)])
    expect(['response.completed', 'response.incomplete']).toContain(types.at(-1))
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('')
    const done = events.find((e) => e.type === 'response.output_text.done')!
    expect(done.text).toBe(deltas)
    const final = events.at(-1)!.response as Record<string, any>
    expect(final.output_text).toBe(deltas)
    expect(final.usage.output_tokens).toBeGreaterThan(0)
  })

  it('tool_choice naming a function returns a call of it (grammar-enforced, the tiny model too), streamed and not', async () => {
    const tools = [
      { type: 'function', name: 'get_weather', parameters: weather },
      { type: 'function', name: 'get_time', parameters: time },
    ]
    for (const seed of [1, 2, 3]) {
      const r = (await (await post('/v1/responses', { model: 'svc-tiny-chat', input: 'What time is it?', tools, tool_choice: { type: 'function', name: 'get_weather' }, seed })).json()) as Record<string, any>
      const calls = r.output.filter((o: { type: string }) => o.type === 'function_call')
      expect(calls).toHaveLength(1)
      expect(calls[0].name).toBe('get_weather')
      expect(typeof JSON.parse(calls[0].arguments).city).toBe('string')
      expect(calls[0].call_id).toMatch(/^call_/)
    }
    const required = (await (await post('/v1/responses', { model: 'svc-tiny-chat', input: 'Hi', tools, tool_choice: 'required', seed: 4 })).json()) as Record<string, any>
    expect(['get_weather', 'get_time']).toContain(required.output.find((o: { type: string }) => o.type === 'function_call').name)
    const events = await namedEvents(await post('/v1/responses', { model: 'svc-tiny-chat', input: 'Hi', tools, tool_choice: { type: 'function', name: 'get_time' }, stream: true, seed: 2 }))
    for (const e of events) zResponseStreamEvent.parse(e)
    const done = events.find((e) => e.type === 'response.function_call_arguments.done')!
    expect(done.name).toBe('get_time')
    expect(['UTC', 'CET']).toContain(JSON.parse(done.arguments as string).zone)
    expect(events.at(-1)!.type).toBe('response.completed')
  })

  it('tool_choice none offers no tools; a function_call / function_call_output conversation is accepted', async () => {
    const tools = [{ type: 'function', name: 'get_weather', parameters: weather }]
    const none = (await (await post('/v1/responses', { model: 'svc-tiny-chat', input: 'Hi', tools, tool_choice: 'none', max_output_tokens: 4, seed: 1 })).json()) as Record<string, any>
    expect(none.output.every((o: { type: string }) => o.type !== 'function_call')).toBe(true)
    const res = await post('/v1/responses', {
      model: 'svc-tiny-chat',
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '18°C' },
      ],
      tools,
      max_output_tokens: 4,
      seed: 1,
    })
    expect(res.status).toBe(200)
  })

  it('text.format json_schema constrains the output', async () => {
    const r = (await (
      await post('/v1/responses', { model: 'svc-tiny-chat', input: 'Pick', text: { format: { type: 'json_schema', name: 'pick', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } }, seed: 1 })
    ).json()) as Record<string, any>
    expect(typeof JSON.parse(r.output_text).ok).toBe('boolean')
  })

  it('refuses previous_response_id, hosted tools and an unknown named function with 400 in OpenAI’s shape', async () => {
    for (const body of [
      { model: 'svc-tiny-chat', input: 'Hi', previous_response_id: 'resp_123' },
      { model: 'svc-tiny-chat', input: 'Hi', tools: [{ type: 'web_search' }] },
      { model: 'svc-tiny-chat', input: 'Hi', tools: [{ type: 'function', name: 'a' }], tool_choice: { type: 'function', name: 'b' } },
    ]) {
      const res = await post('/v1/responses', body)
      expect(res.status).toBe(400)
      const error = zOpenAiError.parse(await res.json())
      expect(error.error.type).toBe('invalid_request_error')
    }
    const res = await post('/v1/responses', { model: 'svc-tiny-chat', input: 'Hi', previous_response_id: 'resp_123' })
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/stateless/)
  })
})

describe('POST /v1/messages', () => {
  it('answers a message with a text block, stop_reason and usage; x-api-key is read as the key', async () => {
    const res = await post('/v1/messages', { model: 'svc-tiny-chat', max_tokens: 8, system: 'Be terse.', messages: [{ role: 'user', content: 'Hello!' }], seed: 1 }, { 'x-api-key': 'any', 'anthropic-version': '2023-06-01' })
    expect(res.status).toBe(200)
    const m = (await res.json()) as Record<string, any>
    expect(m.type).toBe('message')
    expect(m.id).toMatch(/^msg_/)
    expect(m.content[0].type).toBe('text')
    expect(['end_turn', 'max_tokens']).toContain(m.stop_reason)
    expect(m.usage.output_tokens).toBeLessThanOrEqual(8)
  })

  it('streams Anthropic’s event sequence', async () => {
    const events = await namedEvents(await post('/v1/messages', { model: 'svc-tiny-chat', max_tokens: 12, messages: [{ role: 'user', content: 'Hello!' }], stream: true, seed: 5 }))
    for (const e of events) zAnthropicStreamEvent.parse(e)
    const types = events.map((e) => e.type)
    expect(types.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start'])
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop'])
    expect(types.filter((t) => t === 'content_block_delta').length).toBeGreaterThan(0)
    const delta = events.find((e) => e.type === 'message_delta') as Record<string, any>
    expect(delta.usage.output_tokens).toBeGreaterThan(0)
    expect(delta.usage.input_tokens).toBeGreaterThan(0)
  })

  it('tool_choice tool and any return a tool_use of the tool (grammar-enforced), none returns text', async () => {
    const tools = [
      { name: 'get_weather', input_schema: weather },
      { name: 'get_time', input_schema: time },
    ]
    for (const seed of [1, 2, 3]) {
      const m = (await (await post('/v1/messages', { model: 'svc-tiny-chat', max_tokens: 256, messages: [{ role: 'user', content: 'What time is it?' }], tools, tool_choice: { type: 'tool', name: 'get_weather' }, seed })).json()) as Record<string, any>
      expect(m.stop_reason).toBe('tool_use')
      const use = m.content.find((b: { type: string }) => b.type === 'tool_use')
      expect(use.name).toBe('get_weather')
      expect(typeof use.input.city).toBe('string')
      expect(use.id).toMatch(/^toolu_/)
    }
    const any = (await (await post('/v1/messages', { model: 'svc-tiny-chat', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'any' }, seed: 9 })).json()) as Record<string, any>
    expect(any.stop_reason).toBe('tool_use')
    const none = (await (await post('/v1/messages', { model: 'svc-tiny-chat', max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'none' }, seed: 9 })).json()) as Record<string, any>
    expect(none.content.every((b: { type: string }) => b.type !== 'tool_use')).toBe(true)
    const events = await namedEvents(await post('/v1/messages', { model: 'svc-tiny-chat', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'tool', name: 'get_time' }, stream: true, seed: 2 }))
    for (const e of events) zAnthropicStreamEvent.parse(e)
    const start = events.find((e) => e.type === 'content_block_start') as Record<string, any>
    expect(start.content_block).toMatchObject({ type: 'tool_use', name: 'get_time', input: {} })
    const json = events.find((e) => e.type === 'content_block_delta') as Record<string, any>
    expect(['UTC', 'CET']).toContain(JSON.parse(json.delta.partial_json).zone)
    expect((events.find((e) => e.type === 'message_delta') as Record<string, any>).delta.stop_reason).toBe('tool_use')
  })

  it('a tool_use / tool_result conversation is accepted', async () => {
    const res = await post('/v1/messages', {
      model: 'svc-tiny-chat',
      max_tokens: 4,
      tools: [{ name: 'get_weather', input_schema: weather }],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' }] },
      ],
      seed: 1,
    })
    expect(res.status).toBe(200)
  })

  it('an image to a model without vision: 400 in Anthropic’s shape with a clear message; bad input 400, never 5xx', async () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }
    const res = await post('/v1/messages', { model: 'svc-tiny-chat', max_tokens: 4, messages: [{ role: 'user', content: [image, { type: 'text', text: 'What is this?' }] }] })
    expect(res.status).toBe(400)
    const body = zAnthropicError.parse(await res.json())
    expect(body.error.type).toBe('invalid_request_error')
    expect(body.error.message).toMatch(/vision/)
    for (const bad of [{ model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'x' }] }, { model: 'svc-tiny-chat', max_tokens: 4, messages: [] }, { model: 'svc-tiny-chat', max_tokens: 4, messages: [{ role: 'user', content: 'x' }], tool_choice: { type: 'tool', name: 'nope' } }]) {
      const r = await post('/v1/messages', bad)
      expect(r.status).toBe(400)
      expect(zAnthropicError.parse(await r.json()).error.type).toBe('invalid_request_error')
    }
    const missing = await post('/v1/messages', { model: 'nope', max_tokens: 4, messages: [{ role: 'user', content: 'x' }] })
    expect(missing.status).toBe(404)
    expect(zAnthropicError.parse(await missing.json()).error.type).toBe('not_found_error')
  })
})

describe('tool_choice on /v1/chat/completions', () => {
  it('a named function and required return a call (of it), none returns none', async () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: weather } },
      { type: 'function', function: { name: 'get_time', parameters: time } },
    ]
    for (const seed of [1, 2]) {
      const r = (await (await post('/v1/chat/completions', { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'function', function: { name: 'get_time' } }, seed })).json()) as Record<string, any>
      expect(r.choices[0].finish_reason).toBe('tool_calls')
      expect(r.choices[0].message.tool_calls[0].function.name).toBe('get_time')
    }
    const req = (await (await post('/v1/chat/completions', { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: 'required', seed: 3 })).json()) as Record<string, any>
    expect(req.choices[0].message.tool_calls).toHaveLength(1)
    const none = (await (await post('/v1/chat/completions', { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: 'none', max_tokens: 4, seed: 3 })).json()) as Record<string, any>
    expect(none.choices[0].message.tool_calls).toBeUndefined()
  })
})

describe('Ollama 0.33 additions', () => {
  it('GET /api/status reports version, uptime, residents and their queues', async () => {
    await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'Hi', stream: false, options: { num_predict: 1 } })
    const res = await fetch(`${ms.url}/api/status`)
    expect(res.status).toBe(200)
    const s = (await res.json()) as Record<string, any>
    expect(s.status).toBe('ok')
    expect(s.models.map((m: { name: string }) => m.name)).toContain('svc-tiny-chat:latest')
    expect(s.threads).toBe(1)
  })

  it('think "max" is a level: 400 only because the tiny chat model does not think (not a schema error)', async () => {
    const res = await post('/api/chat', { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Hi' }], think: 'max', stream: false })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: string }).error).toMatch(/does not support thinking/)
  })

  it('truncate false refuses a prompt longer than the context; shift true generates past it', async () => {
    const long = 'word '.repeat(400)
    const refused = await post('/api/generate', { model: 'svc-tiny-chat', prompt: long, raw: true, truncate: false, stream: false, options: { num_ctx: 128, num_predict: 1 } })
    expect(refused.status).toBe(400)
    const cut = await post('/api/generate', { model: 'svc-tiny-chat', prompt: long, raw: true, stream: false, options: { num_ctx: 128, num_predict: 1 } })
    expect(cut.status).toBe(200)
    const noShift = (await (await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'a', raw: true, stream: false, shift: false, options: { num_ctx: 64, num_predict: 200, seed: 1, temperature: 0 } })).json()) as Record<string, any>
    const shifted = (await (await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'a', raw: true, stream: false, shift: true, options: { num_ctx: 64, num_predict: 200, seed: 1, temperature: 0 } })).json()) as Record<string, any>
    // Greedy (temperature 0) the tiny chat model never stops on its own within 200 tokens from this prompt (with
    // any seed), so without shift it ends because the context is full, and with shift it runs to num_predict.
    expect(noShift).toMatchObject({ done_reason: 'length' })
    expect(noShift.eval_count).toBeLessThan(64)
    expect(shifted).toMatchObject({ done_reason: 'length', eval_count: 200 })
  })
})
