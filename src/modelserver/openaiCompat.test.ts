/**
 * The OpenAI-compatible routes (`/v1/...`) with the stock `openai` client (only `baseURL` and a dummy key set)
 * and LangChain's `ChatOpenAI` / `OpenAIEmbeddings`, against a live model server on a free port. Every JSON
 * response is validated against openapi/modelserver.yaml by the server itself (validation mode `error`: a
 * mismatch becomes a 500 and is recorded in `ms.mismatches`); every streamed event is validated here with the
 * schemas generated from the document.
 */
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai'
import { Ajv2020 } from 'ajv/dist/2020.js'
import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { zChatCompletionChunk, zCompletionChunk, zOpenAiError } from '../../generated/modelserver/zod.gen.js'
import { createEngine } from './engine/createEngine.js'
import type { Engine } from './engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'

let engine: Engine
let ms: TestModelServer
let client: OpenAI

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', required: ['city'], properties: { city: { type: 'string', description: 'City' } } },
  },
}

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  client = new OpenAI({ baseURL: `${ms.url}/v1`, apiKey: 'dummy' })
})

afterAll(async () => {
  await ms?.close()
  await engine?.dispose()
})

afterEach(() => {
  expect(ms.mismatches).toEqual([])
})

/** Raw SSE: the `data:` payloads in order. */
async function sse(path: string, body: unknown): Promise<{ status: number; type: string; events: string[] }> {
  const res = await fetch(`${ms.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  const events = text
    .split('\n\n')
    .filter((e) => e.trim() !== '')
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true)
      return e.slice('data: '.length)
    })
  return { status: res.status, type: res.headers.get('content-type') ?? '', events }
}

describe('stock openai client', () => {
  it('chat completion (non-streamed): one choice, usage, deterministic for a seed', async () => {
    const request = { model: 'svc-tiny-chat', messages: [{ role: 'user' as const, content: 'Hello!' }], seed: 42, max_tokens: 12 }
    const a = await client.chat.completions.create(request)
    const b = await client.chat.completions.create(request)
    expect(a.object).toBe('chat.completion')
    expect(a.id).toMatch(/^chatcmpl-/)
    expect(a.model).toBe('svc-tiny-chat')
    expect(a.choices).toHaveLength(1)
    expect(a.choices[0]!.message.role).toBe('assistant')
    expect(a.choices[0]!.message.content!.length).toBeGreaterThan(0)
    expect(a.choices[0]!.message.content).toBe(b.choices[0]!.message.content)
    expect(['stop', 'length']).toContain(a.choices[0]!.finish_reason)
    expect(a.usage!.prompt_tokens).toBeGreaterThan(0)
    expect(a.usage!.completion_tokens).toBeGreaterThan(0)
    expect(a.usage!.completion_tokens).toBeLessThanOrEqual(12)
    expect(a.usage!.total_tokens).toBe(a.usage!.prompt_tokens + a.usage!.completion_tokens)
  })

  it('max_tokens bounds the completion and finish_reason says length', async () => {
    const r = await client.chat.completions.create({ model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Tell me a story' }], seed: 3, max_completion_tokens: 2 })
    expect(r.usage!.completion_tokens).toBe(2)
    expect(r.choices[0]!.finish_reason).toBe('length')
  })

  it('streamed chat with include_usage: content deltas, a finish_reason, then a usage chunk; same text as non-streamed', async () => {
    const request = { model: 'svc-tiny-chat', messages: [{ role: 'user' as const, content: 'Hi there' }], seed: 7, max_tokens: 16 }
    const whole = await client.chat.completions.create(request)
    const stream = await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } })
    let text = ''
    const chunks = []
    for await (const chunk of stream) {
      zChatCompletionChunk.parse(chunk)
      chunks.push(chunk)
      text += chunk.choices[0]?.delta.content ?? ''
    }
    expect(text).toBe(whole.choices[0]!.message.content)
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason)
    expect(finish).toHaveLength(1)
    expect(finish[0]!.choices[0]!.finish_reason).toBe(whole.choices[0]!.finish_reason)
    const last = chunks.at(-1)!
    expect(last.choices).toEqual([])
    expect(last.usage).toEqual(whole.usage)
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
  })

  it('response_format json_schema: the content is JSON valid against the schema (grammar-enforced)', async () => {
    const schema = {
      type: 'object',
      properties: { raining: { type: 'boolean' }, level: { type: 'string', enum: ['none', 'light', 'heavy'] } },
      required: ['raining', 'level'],
      additionalProperties: false,
    }
    const validate = new Ajv2020().compile(schema)
    for (const seed of [1, 2]) {
      const r = await client.chat.completions.create({
        model: 'svc-tiny-chat',
        messages: [{ role: 'user', content: 'Is it raining?' }],
        seed,
        response_format: { type: 'json_schema', json_schema: { name: 'weather', schema, strict: true } },
      })
      const value = JSON.parse(r.choices[0]!.message.content!)
      expect(validate(value), JSON.stringify(validate.errors)).toBe(true)
    }
    const json = await client.chat.completions.create({ model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'JSON please' }], seed: 4, response_format: { type: 'json_object' } })
    expect(typeof JSON.parse(json.choices[0]!.message.content!)).toBe('object')
  })

  it('tools round trip: a tool call (finish_reason tool_calls) → a tool message with its id → an answer', async () => {
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }]
    const first = await client.chat.completions.create({ model: 'svc-tiny-chat', messages, tools: [weatherTool], seed: 5, max_tokens: 64 })
    const choice = first.choices[0]!
    expect(choice.finish_reason).toBe('tool_calls')
    const call = choice.message.tool_calls![0]!
    expect(call.type).toBe('function')
    expect(call.id).toMatch(/^call_[a-z0-9]{8}$/)
    if (call.type !== 'function') throw new Error('not a function call')
    expect(call.function.name).toBe('get_weather')
    const args = JSON.parse(call.function.arguments) as Record<string, unknown>
    expect(typeof args.city).toBe('string') // the argument grammar guarantees the schema's shape
    const second = await client.chat.completions.create({
      model: 'svc-tiny-chat',
      messages: [...messages, choice.message, { role: 'tool', tool_call_id: call.id, content: '18 degrees, sunny' }],
      tools: [weatherTool],
      seed: 5,
      max_tokens: 8,
    })
    expect(second.choices[0]!.message.tool_calls ?? []).toEqual([])
    expect(['stop', 'length']).toContain(second.choices[0]!.finish_reason)
    expect(second.usage!.prompt_tokens).toBeGreaterThan(first.usage!.prompt_tokens) // the call and its result are in the prompt
  })

  it('streamed tool call: the call arrives whole in a delta, then finish_reason tool_calls', async () => {
    const stream = await client.chat.completions.create({
      model: 'svc-tiny-chat',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [weatherTool],
      seed: 5,
      max_tokens: 64,
      stream: true,
    })
    const chunks = []
    for await (const chunk of stream) {
      zChatCompletionChunk.parse(chunk)
      chunks.push(chunk)
    }
    const withCalls = chunks.filter((c) => c.choices[0]?.delta.tool_calls?.length)
    expect(withCalls).toHaveLength(1)
    const call = withCalls[0]!.choices[0]!.delta.tool_calls![0]!
    expect(call.function!.name).toBe('get_weather')
    expect(typeof JSON.parse(call.function!.arguments!).city).toBe('string')
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls')
    // The final chunk comes after the call's chunk.
    expect(chunks.indexOf(withCalls[0]!)).toBeLessThan(chunks.length - 1)
  })

  it('tool_choice none offers no tools', async () => {
    const r = await client.chat.completions.create({
      model: 'svc-tiny-chat',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [weatherTool],
      tool_choice: 'none',
      seed: 5,
      max_tokens: 8,
    })
    expect(r.choices[0]!.message.tool_calls ?? []).toEqual([])
    expect(r.choices[0]!.finish_reason).not.toBe('tool_calls')
  })

  it('completions, non-streamed and streamed (same text for the same seed)', async () => {
    const request = { model: 'svc-tiny-chat', prompt: 'Once upon a time', max_tokens: 10, seed: 9 }
    const whole = await client.completions.create(request)
    expect(whole.object).toBe('text_completion')
    expect(whole.id).toMatch(/^cmpl-/)
    expect(whole.choices[0]!.text.length).toBeGreaterThan(0)
    expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(10)
    const stream = await client.completions.create({ ...request, stream: true })
    let text = ''
    let finish: string | null = null
    for await (const chunk of stream) {
      zCompletionChunk.parse(chunk)
      text += chunk.choices[0]?.text ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
    }
    expect(text).toBe(whole.choices[0]!.text)
    expect(finish).toBe(whole.choices[0]!.finish_reason)
  })

  it('embeddings as float and as base64 (the client’s default, decoded by it) are the same unit vectors', async () => {
    const input = ['hello world', 'goodbye']
    const float = await client.embeddings.create({ model: 'svc-tiny-embed', input, encoding_format: 'float' })
    expect(float.object).toBe('list')
    expect(float.data.map((d) => d.index)).toEqual([0, 1])
    const v = float.data[0]!.embedding
    expect(v).toHaveLength(64)
    expect(Math.hypot(...v)).toBeCloseTo(1, 4)
    expect(float.usage.prompt_tokens).toBeGreaterThan(0)
    const decoded = await client.embeddings.create({ model: 'svc-tiny-embed', input }) // asks for base64, decodes it
    for (let i = 0; i < 2; i++) {
      decoded.data[i]!.embedding.forEach((x, k) => expect(x).toBeCloseTo(float.data[i]!.embedding[k]!, 6))
    }
    const raw = await client.embeddings.create({ model: 'svc-tiny-embed', input: 'hello world', encoding_format: 'base64' })
    const b64 = raw.data[0]!.embedding as unknown as string
    expect(typeof b64).toBe('string')
    expect(Buffer.from(b64, 'base64').length).toBe(64 * 4)
    const short = await client.embeddings.create({ model: 'svc-tiny-embed', input: 'hello world', dimensions: 16, encoding_format: 'float' })
    expect(short.data[0]!.embedding).toHaveLength(16)
    expect(Math.hypot(...short.data[0]!.embedding)).toBeCloseTo(1, 4)
  })

  it('models.list and models.retrieve', async () => {
    const ids = []
    for await (const m of client.models.list()) {
      expect(m.object).toBe('model')
      expect(m.owned_by).toBe('library')
      ids.push(m.id)
    }
    expect(ids).toEqual(expect.arrayContaining(['svc-tiny-chat:latest', 'svc-tiny-embed:latest']))
    const one = await client.models.retrieve('svc-tiny-chat:latest')
    expect(one).toMatchObject({ id: 'svc-tiny-chat:latest', object: 'model', owned_by: 'library' })
    expect(one.created).toBeGreaterThan(1_600_000_000)
  })

  it('errors arrive in OpenAI’s shape with Ollama’s statuses', async () => {
    const missing = await client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError)
    expect(missing.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found' })
    expect(missing.message).toContain("model 'no-such-model' not found")
    const retrieve = await client.models.retrieve('no-such-model').catch((e) => e)
    expect(retrieve).toBeInstanceOf(OpenAI.NotFoundError)
    const empty = await client.chat.completions.create({ model: 'svc-tiny-chat', messages: [] }).catch((e) => e)
    expect(empty).toBeInstanceOf(OpenAI.BadRequestError)
    expect(empty.error).toMatchObject({ type: 'invalid_request_error', param: 'messages' })
    const embedChat = await client.chat.completions.create({ model: 'svc-tiny-embed', messages: [{ role: 'user', content: 'x' }] }).catch((e) => e)
    expect(embedChat).toBeInstanceOf(OpenAI.BadRequestError)
    const tooWide = await client.embeddings.create({ model: 'svc-tiny-embed', input: 'x', dimensions: 65 }).catch((e) => e)
    expect(tooWide).toBeInstanceOf(OpenAI.BadRequestError)
    const badArgs = await client.chat.completions
      .create({
        model: 'svc-tiny-chat',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{not json' } }] },
        ],
      })
      .catch((e) => e)
    expect(badArgs).toBeInstanceOf(OpenAI.BadRequestError)
    expect(badArgs.error.param).toBe('messages[1].tool_calls[0].function.arguments')
  })
})

describe('raw HTTP', () => {
  it('SSE: text/event-stream, every event a ChatCompletionChunk, ending with data: [DONE]', async () => {
    const { status, type, events } = await sse('/v1/chat/completions', { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Hi' }], stream: true, max_tokens: 5, seed: 1 })
    expect(status).toBe(200)
    expect(type).toMatch(/^text\/event-stream/)
    expect(events.at(-1)).toBe('[DONE]')
    for (const e of events.slice(0, -1)) zChatCompletionChunk.parse(JSON.parse(e))
    const streamedCompletion = await sse('/v1/completions', { model: 'svc-tiny-chat', prompt: 'Hi', stream: true, max_tokens: 5, seed: 1 })
    expect(streamedCompletion.events.at(-1)).toBe('[DONE]')
    for (const e of streamedCompletion.events.slice(0, -1)) zCompletionChunk.parse(JSON.parse(e))
  })

  it('malformed JSON and unknown /v1 paths get OpenAI-shaped 400 / 404', async () => {
    const bad = await fetch(`${ms.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' })
    expect(bad.status).toBe(400)
    zOpenAiError.parse(await bad.json())
    const unknown = await fetch(`${ms.url}/v1/nothing-here`)
    expect(unknown.status).toBe(404)
    expect(zOpenAiError.parse(await unknown.json()).error.type).toBe('not_found_error')
    const noModel = await fetch(`${ms.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'x' }) })
    expect(noModel.status).toBe(400)
    expect(zOpenAiError.parse(await noModel.json()).error.param).toBe('model')
  })

  it('an abandoned stream stops generation (the model is free again at once)', async () => {
    const request = { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Write forever' }], max_tokens: 1900, seed: 10 }
    // Not abandoned, this seed writes hundreds of tokens (843 with the current tiny model).
    const full = (await client.chat.completions.create({ ...request, messages: [{ role: 'user', content: 'Write forever' }] })).usage!.completion_tokens
    expect(full).toBeGreaterThan(300)
    const controller = new AbortController()
    const res = await fetch(`${ms.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...request, stream: true }),
      signal: controller.signal,
    })
    await res.body!.getReader().read()
    const before = await metricsTokens()
    controller.abort()
    // The next request waits for the abandoned one in the model's queue; the abandoned one counted far fewer tokens.
    await client.chat.completions.create({ model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 1, seed: 1 })
    const after = await metricsTokens()
    expect(after - before - 1).toBeLessThan(full / 2)
  })
})

async function metricsTokens(): Promise<number> {
  const text = await (await fetch(`${ms.url}/metrics`)).text()
  let sum = 0
  for (const line of text.split('\n')) if (line.startsWith('modelserver_generated_tokens_total{')) sum += Number(line.split(' ').at(-1))
  return sum
}

describe('LangChain', () => {
  it('ChatOpenAI invokes and streams', async () => {
    const model = new ChatOpenAI({ model: 'svc-tiny-chat', apiKey: 'dummy', configuration: { baseURL: `${ms.url}/v1` }, maxTokens: 8, temperature: 0 })
    const reply = await model.invoke('Hello')
    expect(typeof reply.content).toBe('string')
    expect((reply.content as string).length).toBeGreaterThan(0)
    expect(reply.usage_metadata?.output_tokens).toBeGreaterThan(0)
    let streamed = ''
    for await (const chunk of await model.stream('Hello')) streamed += chunk.content as string
    expect(streamed).toBe(reply.content)
  })

  it('OpenAIEmbeddings embeds documents and a query', async () => {
    const embeddings = new OpenAIEmbeddings({ model: 'svc-tiny-embed', apiKey: 'dummy', configuration: { baseURL: `${ms.url}/v1` } })
    const docs = await embeddings.embedDocuments(['a', 'b'])
    expect(docs).toHaveLength(2)
    expect(docs[0]).toHaveLength(64)
    const query = await embeddings.embedQuery('a')
    query.forEach((x, k) => expect(x).toBeCloseTo(docs[0]![k]!, 5))
  })
})
