import { createHash } from 'node:crypto'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Ollama } from 'ollama'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zChatChunk, zGenerateChunk, zProgressChunk } from '../../generated/modelserver/zod.gen.js'
import { createEngine } from './engine/createEngine.js'
import type { Engine } from './engine/Engine.js'
import { buildTinyChatModel, buildTinyLlama, tinyChatOptions } from './gguf/index.js'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'

let engine: Engine
let ms: TestModelServer
let ollama: Ollama

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${ms.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, type: res.headers.get('content-type') ?? '', text, json: text && !text.includes('\n{') ? (JSON.parse(text) as any) : undefined }
}
const ndjson = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l) as any)
const psNames = async () => (await ollama.ps()).models.map((m) => m.name)

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  ollama = new Ollama({ host: ms.url })
})

afterAll(async () => {
  await ms?.close()
  await engine?.dispose()
})

describe('model server with the stock ollama client', () => {
  it('lists the default models installed on first run', async () => {
    const { models } = await ollama.list()
    const chat = models.find((m) => m.name === 'svc-tiny-chat:latest')!
    expect(chat).toBeDefined()
    expect(models.map((m) => m.name)).toContain('svc-tiny-embed:latest')
    expect(chat.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(chat.size).toBeGreaterThan(100_000)
    expect(chat.details).toMatchObject({ format: 'gguf', family: 'llama', quantization_level: 'F32' })
    expect(chat.details.parameter_size).toMatch(/^[0-9.]+K$/)
  })

  it('says plainly that the built-in models are random-weight test models, under any name; other models are not', async () => {
    const raw = (await (await fetch(`${ms.url}/api/tags`)).json()) as { models: Array<{ name: string; details: Record<string, unknown> }> }
    for (const name of ['svc-tiny-chat:latest', 'svc-tiny-embed:latest']) {
      const details = raw.models.find((m) => m.name === name)!.details
      expect(details.test_model, name).toBe(true)
      expect(details.note).toMatch(/^Test model with random weights/)
      expect(details.note).toContain('pay2store models create')
    }
    const show = await post('/api/show', { model: 'svc-tiny-chat' })
    expect(show.json.details).toMatchObject({ test_model: true, note: expect.stringContaining('gibberish') })
    // The same weights under another name are still the test model.
    await ollama.copy({ source: 'svc-tiny-chat', destination: 'renamed:v1' })
    expect((await post('/api/show', { model: 'renamed:v1' })).json.details.test_model).toBe(true)
    await ollama.delete({ model: 'renamed:v1' })
    // Other weights (a GGUF created from a blob) are not flagged, whatever their name.
    const bytes = buildTinyLlama({ ...tinyChatOptions, seed: 7, name: 'other' }).bytes
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    await fetch(`${ms.url}/api/blobs/${digest}`, { method: 'POST', body: new Uint8Array(bytes) })
    expect((await post('/api/create', { model: 'svc-tiny-chat:other', files: { 'other.gguf': digest }, stream: false })).status).toBe(200)
    const other = (await post('/api/show', { model: 'svc-tiny-chat:other' })).json.details
    expect(other.test_model).toBe(false)
    expect(other.note).toBeUndefined()
    await ollama.delete({ model: 'svc-tiny-chat:other' })
  })

  it('shows capabilities and model_info detected from the GGUF', async () => {
    const show = await ollama.show({ model: 'svc-tiny-chat' })
    expect(show.capabilities).toEqual(expect.arrayContaining(['completion', 'tools']))
    const info = show.model_info as unknown as Record<string, unknown>
    expect(info['general.architecture']).toBe('llama')
    expect(info['general.parameter_count']).toBeGreaterThan(0)
    expect(info['llama.context_length']).toBe(2048)
    expect(info['llama.embedding_length']).toBe(64)
    expect(info['llama.block_count']).toBe(2)
    expect(show.details.family).toBe('llama')
    const embed = await ollama.show({ model: 'svc-tiny-embed:latest' })
    expect(embed.capabilities).toContain('embedding')
    expect(embed.capabilities).not.toContain('completion')
  })

  it('generates deterministically for the same seed (non-streamed), with every duration', async () => {
    const request = { model: 'svc-tiny-chat', prompt: 'Once upon a time', stream: false as const, options: { seed: 42, temperature: 0.8, num_predict: 16 } }
    const a = await ollama.generate(request)
    const b = await ollama.generate(request)
    expect(a.response.length).toBeGreaterThan(0)
    expect(a.response).toBe(b.response)
    expect(a.done).toBe(true)
    expect(['stop', 'length']).toContain(a.done_reason)
    expect(a.eval_count).toBeLessThanOrEqual(16)
    expect(a.prompt_eval_count).toBeGreaterThan(0)
    for (const k of ['total_duration', 'prompt_eval_duration', 'eval_duration'] as const) expect(a[k]).toBeGreaterThan(0)
    expect(a.load_duration).toBeGreaterThanOrEqual(0)
  })

  it('streams generate chunks that match the GenerateChunk schema; the last one carries done_reason', async () => {
    const stream = await ollama.generate({ model: 'svc-tiny-chat', prompt: 'Hello', stream: true, options: { seed: 1, num_predict: 12 } })
    const chunks = []
    for await (const c of stream) chunks.push(c)
    for (const c of chunks) zGenerateChunk.parse({ ...c, created_at: String(c.created_at) })
    const last = chunks.at(-1)!
    expect(last.done).toBe(true)
    expect(last.done_reason).toMatch(/^(stop|length)$/)
    expect(chunks.slice(0, -1).every((c) => !c.done)).toBe(true)
  })

  it('chats with streaming; the chunks match ChatChunk', async () => {
    const stream = await ollama.chat({
      model: 'svc-tiny-chat',
      messages: [{ role: 'user', content: 'Hi there' }],
      stream: true,
      options: { seed: 3, num_predict: 10 },
    })
    let text = ''
    let last
    for await (const c of stream) {
      zChatChunk.parse({ ...c, created_at: String(c.created_at) })
      text += c.message.content
      last = c
    }
    expect(last!.done).toBe(true)
    expect(last!.eval_count).toBeGreaterThan(0)
    expect(text.length).toBeGreaterThan(0)
  })

  it('returns tool calls and continues the conversation with a tool message', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: { type: 'object', required: ['city'], properties: { city: { type: 'string', description: 'City' } } },
        },
      },
    ]
    const messages = [{ role: 'user', content: 'What is the weather in Paris?' }]
    const first = await ollama.chat({ model: 'svc-tiny-chat', messages, tools, stream: false, options: { seed: 5, num_predict: 64 } })
    expect(first.message.role).toBe('assistant')
    const calls = first.message.tool_calls ?? []
    expect(calls.length).toBeGreaterThan(0)
    expect(calls[0]!.function.name).toBe('get_weather')
    expect(typeof calls[0]!.function.arguments).toBe('object')
    const second = await ollama.chat({
      model: 'svc-tiny-chat',
      messages: [...messages, first.message, { role: 'tool', tool_name: 'get_weather', content: '18 degrees, sunny' }],
      tools,
      stream: false,
      options: { seed: 5, num_predict: 8 },
    })
    expect(second.done).toBe(true)
  })

  it('structured output: a JSON schema with enum and boolean always yields valid JSON', async () => {
    const schema = {
      type: 'object',
      properties: { raining: { type: 'boolean' }, level: { type: 'string', enum: ['none', 'light', 'heavy'] } },
      required: ['raining', 'level'],
    }
    const validate = new Ajv2020().compile(schema)
    for (const seed of [1, 2, 3]) {
      const res = await ollama.generate({ model: 'svc-tiny-chat', prompt: 'Weather?', format: schema, stream: false, options: { seed } })
      const value = JSON.parse(res.response)
      expect(validate(value)).toBe(true)
    }
  })

  it('a chat model embeds too, as in Ollama, and still chats whichever of the two loaded it', async () => {
    const chat = async () => (await post('/api/chat', { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'x' }], stream: false, options: { num_predict: 1 } })).status
    const embed = async () => (await post('/api/embed', { model: 'svc-tiny-chat', input: ['a', 'b'] })).json.embeddings as number[][]
    for (const first of ['embed', 'chat']) {
      await post('/api/generate', { model: 'svc-tiny-chat', keep_alive: 0 })
      if (first === 'embed') expect(await embed()).toHaveLength(2)
      expect(await chat(), `loaded by ${first}`).toBe(200)
      const vectors = await embed()
      expect(vectors.map((v) => v.length)).toEqual([64, 64])
      expect(await chat(), `loaded by ${first}`).toBe(200)
    }
    // an embedding model is no chat model, loaded either way
    expect((await post('/api/generate', { model: 'svc-tiny-embed', prompt: 'x', stream: false })).json.error).toBe('"svc-tiny-embed" does not support generate')
  })

  it('embeds a string or a list, one vector per input, with dimensions', async () => {
    const one = await ollama.embed({ model: 'svc-tiny-embed', input: 'hello' })
    expect(one.embeddings).toHaveLength(1)
    expect(one.embeddings[0]).toHaveLength(64)
    const many = await ollama.embed({ model: 'svc-tiny-embed', input: ['a', 'b', 'c'], dimensions: 8 })
    expect(many.embeddings).toHaveLength(3)
    expect(many.embeddings[0]).toHaveLength(8)
    expect(many.prompt_eval_count).toBeGreaterThan(0)
  })

  it('ps shows resident models with expires_at, size, size_vram 0 and context_length', async () => {
    await ollama.generate({ model: 'svc-tiny-chat', prompt: 'x', stream: false, options: { num_predict: 1 } })
    const { models } = await ollama.ps()
    const chat = models.find((m) => m.name === 'svc-tiny-chat:latest')!
    expect(chat.size).toBeGreaterThan(0)
    expect(chat.size_vram).toBe(0)
    expect((chat as unknown as { context_length: number }).context_length).toBe(2048)
    const expires = new Date(chat.expires_at).getTime()
    expect(expires).toBeGreaterThan(Date.now() + 4 * 60_000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 5 * 60_000 + 1000)
  })

  it('keep_alive: only `model` preloads (load), 0 unloads at once (unload), 2s expires', async () => {
    const unload = await post('/api/generate', { model: 'svc-tiny-chat', keep_alive: 0 })
    expect(unload.json).toMatchObject({ done: true, done_reason: 'unload', response: '' })
    expect(await psNames()).not.toContain('svc-tiny-chat:latest')
    const load = await post('/api/chat', { model: 'svc-tiny-chat' })
    expect(load.json).toMatchObject({ done: true, done_reason: 'load' })
    expect(await psNames()).toContain('svc-tiny-chat:latest')
    const forever = await post('/api/generate', { model: 'svc-tiny-chat', keep_alive: -1 })
    expect(forever.json.done_reason).toBe('load')
    expect(new Date((await ollama.ps()).models[0]!.expires_at).getUTCFullYear()).toBeGreaterThan(2200)
    await ollama.generate({ model: 'svc-tiny-chat', prompt: 'hi', keep_alive: '2s', stream: false, options: { num_predict: 2 } })
    expect(await psNames()).toContain('svc-tiny-chat:latest')
    await new Promise((r) => setTimeout(r, 2600))
    expect(await psNames()).not.toContain('svc-tiny-chat:latest')
    // An unload takes any model, as `ollama stop` sends it for an embedding model too; a load still needs generate.
    await ollama.embed({ model: 'svc-tiny-embed', input: 'x', keep_alive: -1 })
    expect(await psNames()).toContain('svc-tiny-embed:latest')
    for (const path of ['/api/generate', '/api/chat']) {
      await ollama.embed({ model: 'svc-tiny-embed', input: 'x', keep_alive: -1 })
      expect(await post(path, { model: 'svc-tiny-embed', keep_alive: 0 }), path).toMatchObject({ status: 200, json: { done: true, done_reason: 'unload' } })
      expect(await psNames()).not.toContain('svc-tiny-embed:latest')
    }
    expect((await post('/api/generate', { model: 'svc-tiny-embed' })).json.error).toBe('"svc-tiny-embed" does not support generate')
  })

  it('creates from an existing model (system, parameters, messages, license), copies and deletes', async () => {
    const progress = await ollama.create({
      model: 'terse',
      from: 'svc-tiny-chat',
      system: 'You are terse.',
      parameters: { temperature: 0.1, stop: ['END'] },
      license: 'MIT',
      messages: [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi' }],
      stream: true,
    })
    const statuses: string[] = []
    for await (const p of progress) {
      zProgressChunk.parse(p)
      statuses.push(p.status)
    }
    expect(statuses.at(-2)).toBe('writing manifest')
    expect(statuses.at(-1)).toBe('success')
    const show = await ollama.show({ model: 'terse' })
    expect(show.system).toBe('You are terse.')
    expect(show.parameters).toMatch(/temperature\s+0.1/)
    expect(show.parameters).toMatch(/stop\s+"END"/)
    expect(show.license).toBe('MIT')
    expect(show.messages).toHaveLength(2)
    const res = await ollama.chat({ model: 'terse', messages: [{ role: 'user', content: 'x' }], stream: false, options: { num_predict: 2 } })
    expect(res.done).toBe(true)

    await ollama.copy({ source: 'terse', destination: 'terse:copy' })
    expect((await ollama.list()).models.map((m) => m.name)).toEqual(expect.arrayContaining(['terse:latest', 'terse:copy']))
    await ollama.delete({ model: 'terse' })
    await ollama.delete({ model: 'terse:copy' })
    expect((await ollama.list()).models.map((m) => m.name)).not.toContain('terse:latest')
    await expect(ollama.delete({ model: 'terse' })).rejects.toMatchObject({ status_code: 404, error: "model 'terse' not found" })
    // The shared model blob is still there for svc-tiny-chat.
    expect((await ollama.show({ model: 'svc-tiny-chat' })).details.family).toBe('llama')
  })

  it('blobs: HEAD 404 → POST 201 → HEAD 200; a digest mismatch is 400; a GGUF blob creates a working model', async () => {
    const bytes = buildTinyChatModel()
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    const other = `sha256:${'ab'.repeat(32)}`
    expect((await fetch(`${ms.url}/api/blobs/${other}`, { method: 'HEAD' })).status).toBe(404)
    const bad = await fetch(`${ms.url}/api/blobs/${other}`, { method: 'POST', body: new Uint8Array(bytes) })
    expect(bad.status).toBe(400)
    expect((await bad.json()).error).toMatch(/digest mismatch/)
    expect((await fetch(`${ms.url}/api/blobs/${other}`, { method: 'HEAD' })).status).toBe(404)
    // No content-type at all, as Ollama's own CLI sends.
    const put = await fetch(`${ms.url}/api/blobs/${digest}`, { method: 'POST', body: new Uint8Array(bytes) })
    expect([200, 201]).toContain(put.status)
    expect((await fetch(`${ms.url}/api/blobs/${digest}`, { method: 'HEAD' })).status).toBe(200)

    const created = await post('/api/create', { model: 'from-blob', files: { 'model.gguf': digest }, stream: false })
    expect(created.status).toBe(200)
    expect(created.json).toEqual({ status: 'success' })
    const out = await ollama.generate({ model: 'from-blob', prompt: 'a', stream: false, options: { num_predict: 2 } })
    expect(out.done).toBe(true)
    const notGguf = Buffer.from('definitely not a gguf file')
    const d2 = `sha256:${createHash('sha256').update(notGguf).digest('hex')}`
    expect((await fetch(`${ms.url}/api/blobs/${d2}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: notGguf })).status).toBe(201)
    const invalid = await post('/api/create', { model: 'junk', files: { 'x.gguf': d2 } })
    expect(invalid.status).toBe(400)
    // A GGUF cut off before its last tensor's end (an interrupted copy; GGUF's reader fills the rest with zeros) or a
    // bare header: refused at create with why, not a model whose first generation fails on the server.
    for (const [file, cut, reason] of [
      ['cut.gguf', bytes.subarray(0, bytes.length - 100), /cut\.gguf.*ends at byte .* before its tensor data/],
      ['header.gguf', Buffer.from('GGUF\x03\x00\x00\x00'), /header\.gguf.*no architecture/],
    ] as const) {
      const d = `sha256:${createHash('sha256').update(cut).digest('hex')}`
      expect((await fetch(`${ms.url}/api/blobs/${d}`, { method: 'POST', body: new Uint8Array(cut) })).status).toBe(201)
      const refused = await post('/api/create', { model: 'cut', files: { [file]: d }, stream: false })
      expect(refused, file).toMatchObject({ status: 400, json: { error: expect.stringMatching(reason) } })
    }
    expect((await post('/api/show', { model: 'cut' })).status).toBe(404)
    await ollama.delete({ model: 'from-blob' })
  })

  it('thinking: a model whose template has a thinking section accepts think and streams with the client', async () => {
    const bytes = buildTinyLlama({ ...tinyChatOptions, thinking: true, name: 'thinker' }).bytes
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    expect((await fetch(`${ms.url}/api/blobs/${digest}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(201)
    await ollama.create({ model: 'thinker', files: { 'thinker.gguf': digest }, stream: false } as Parameters<Ollama['create']>[0])
    expect((await ollama.show({ model: 'thinker' })).capabilities).toContain('thinking')
    const stream = await ollama.chat({ model: 'thinker', messages: [{ role: 'user', content: 'why?' }], think: true, stream: true, options: { seed: 2, num_predict: 24 } })
    let last
    for await (const c of stream) last = zChatChunk.parse({ ...c, created_at: String(c.created_at) })
    expect(last!.done).toBe(true)
    const plain = await ollama.chat({ model: 'thinker', messages: [{ role: 'user', content: 'why?' }], think: false, stream: false, options: { num_predict: 4 } })
    expect(plain.done).toBe(true)
    await ollama.delete({ model: 'thinker' })
  })

  it('answers client mistakes with Ollama statuses and {error} bodies', async () => {
    expect(await post('/api/generate', { model: 'nope', prompt: 'x' })).toMatchObject({ status: 404, json: { error: "model 'nope' not found" } })
    expect(await post('/api/chat', { model: 'nope:v1', messages: [] })).toMatchObject({ status: 404 })
    expect(await post('/api/generate', { prompt: 'x' })).toMatchObject({ status: 400, json: { error: 'model is required' } })
    expect((await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'x', think: true })).json).toEqual({
      error: '"svc-tiny-chat" does not support thinking',
    })
    const gen = await post('/api/generate', { model: 'svc-tiny-embed', prompt: 'x' })
    expect(gen.status).toBe(400)
    expect(gen.json.error).toMatch(/does not support generate/)
    expect((await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'x', images: ['aGk='] })).status).toBe(400)
    expect((await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'x', keep_alive: 'soon' })).status).toBe(400)
    expect((await post('/api/embed', { model: 'svc-tiny-embed', input: 'x'.repeat(20_000), truncate: false })).status).toBe(400)
    // An input far longer than the context (300 kB): truncated as documented (truncate defaults to true), a 400
    // in the {error} shape with truncate false — never a 500.
    const huge = 'B'.repeat(300_000)
    expect((await post('/api/embed', { model: 'svc-tiny-embed', input: huge })).json.embeddings[0]).toHaveLength(64)
    expect((await post('/api/embeddings', { model: 'svc-tiny-embed', prompt: huge })).json.embedding).toHaveLength(64)
    expect(await post('/api/embed', { model: 'svc-tiny-embed', input: [huge], truncate: false })).toMatchObject({ status: 400, json: { error: 'input exceeds maximum context length' } })
    const quantize = await post('/api/create', { model: 'q', from: 'svc-tiny-chat', quantize: 'q4_K_M' })
    expect(quantize.status).toBe(400)
    expect(quantize.json.error).toMatch(/quantiz/)
    expect((await post('/api/create', { model: 'q', from: 'missing-model' })).status).toBe(404)
    expect((await post('/api/create', { model: 'q' })).status).toBe(400)
    // A default option of the wrong type is refused at create, as a generation's own option is.
    const wrongType = await post('/api/create', { model: 'q', from: 'svc-tiny-chat', parameters: { num_ctx: 'large' }, stream: false })
    expect(wrongType).toMatchObject({ status: 400, json: { error: expect.stringMatching(/num_ctx/) } })
    expect((await post('/api/show', { model: 'q' })).status).toBe(404)
    expect((await post('/api/copy', { source: 'missing-model', destination: 'x' })).status).toBe(404)
    expect((await post('/api/show', { model: 'bad name!' })).status).toBe(400)
    const broken = await fetch(`${ms.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":' })
    expect(broken.status).toBe(400)
    expect(typeof (await broken.json()).error).toBe('string')
  })

  it('reads JSON bodies whatever the Content-Type, as Ollama (curl -d sends form-urlencoded)', async () => {
    const body = JSON.stringify({ model: 'svc-tiny-chat', prompt: 'Hi', stream: false, options: { seed: 3, num_predict: 4 } })
    const expected = (await post('/api/generate', JSON.parse(body))).json.response
    for (const headers of [{}, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'text/plain' }] as Array<Record<string, string>>) {
      const res = await fetch(`${ms.url}/api/generate`, { method: 'POST', headers, body: new TextEncoder().encode(body) })
      expect(res.status).toBe(200)
      expect((await res.json()).response).toBe(expected)
    }
    const show = await fetch(`${ms.url}/api/show`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '{"model":"svc-tiny-chat"}' })
    expect(show.status).toBe(200)
    const broken = await fetch(`${ms.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"model":' })
    expect(broken.status).toBe(400)
    expect(typeof (await broken.json()).error).toBe('string')
    // No body at all, whatever it is labelled: the missing body it is (400), not a 415 the document does not have
    for (const type of ['text/plain', 'application/x-www-form-urlencoded']) {
      const empty = await fetch(`${ms.url}/api/generate`, { method: 'POST', headers: { 'content-type': type } })
      expect(empty.status, type).toBe(400)
      expect(typeof (await empty.json()).error).toBe('string')
    }
    // Blobs stay raw bytes: a JSON-looking body with a JSON content type is hashed as sent.
    const bytes = Buffer.from('{"not":"parsed"}')
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    const blob = await fetch(`${ms.url}/api/blobs/${digest}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes })
    expect(blob.status).toBe(201)
  })

  it('exposes Prometheus metrics: requests, tokens, load time, resident memory', async () => {
    await ollama.generate({ model: 'svc-tiny-chat', prompt: 'metrics', stream: false, options: { num_predict: 3 } })
    const res = await fetch(`${ms.url}/metrics`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/)
    const text = await res.text()
    expect(text).toMatch(/modelserver_requests_total\{operation="generate",status="200"\} [1-9]/)
    expect(text).toMatch(/modelserver_generated_tokens_total\{model="svc-tiny-chat:latest"\} [1-9]/)
    expect(text).toMatch(/modelserver_prompt_tokens_total\{model="svc-tiny-chat:latest"\} [1-9]/)
    expect(text).toMatch(/modelserver_model_load_seconds_count\{model="svc-tiny-chat:latest"\} [1-9]/)
    expect(text).toMatch(/modelserver_resident_model_bytes\{model="svc-tiny-chat:latest"\} [1-9]/)
  })

  it('version, the root liveness answer and the older /api/embeddings', async () => {
    expect((await ollama.version()).version).toMatch(/^\d+\.\d+\.\d+/)
    expect(await (await fetch(`${ms.url}/`)).text()).toBe('Ollama is running')
    const { embedding } = await ollama.embeddings({ model: 'svc-tiny-embed', prompt: 'hello' })
    expect(embedding).toHaveLength(64)
    const { embeddings } = await ollama.embed({ model: 'svc-tiny-embed', input: 'hello' })
    expect(embedding).toEqual(embeddings[0])
  })

  it('every response matched openapi/modelserver.yaml', () => {
    expect(ms.mismatches).toEqual([])
  })
})

describe('memory budget', () => {
  it('loading a model past MODELSERVER_MAX_LOADED_BYTES unloads the least recently used one', async () => {
    const small = await startTestModelServer({ engine, config: { maxLoadedBytes: 30 * 1024 * 1024 } })
    try {
      const client = new Ollama({ host: small.url })
      await client.generate({ model: 'svc-tiny-chat', prompt: 'x', stream: false, options: { num_predict: 1 } })
      expect((await client.ps()).models.map((m) => m.name)).toEqual(['svc-tiny-chat:latest'])
      await client.embed({ model: 'svc-tiny-embed', input: 'x' })
      expect((await client.ps()).models.map((m) => m.name)).toEqual(['svc-tiny-embed:latest'])
      expect(await (await fetch(`${small.url}/metrics`)).text()).toMatch(/modelserver_model_unloads_total\{model="svc-tiny-chat:latest"\} 1/)
    } finally {
      await small.close()
    }
  })
})

describe('concurrency', () => {
  let busy: TestModelServer
  beforeAll(async () => {
    busy = await startTestModelServer({ engine, config: { maxQueue: 1 } })
  })
  afterAll(async () => busy?.close())

  it('503 server busy past the queue bound; a client that disconnects frees the model', async () => {
    await fetch(`${busy.url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: 'svc-tiny-chat' }), headers: { 'content-type': 'application/json' } })
    const controller = new AbortController()
    const long = await fetch(`${busy.url}/api/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-tiny-chat', prompt: 'go', options: { num_predict: 100_000, seed: 9 } }),
      signal: controller.signal,
    })
    expect(long.status).toBe(200)
    const reader = long.body!.getReader()
    await reader.read()
    const second = await fetch(`${busy.url}/api/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-tiny-chat', prompt: 'x', stream: false }),
    })
    expect(second.status).toBe(503)
    expect((await second.json()).error).toMatch(/^server busy/)
    controller.abort()
    const started = Date.now()
    let status = 0
    while (Date.now() - started < 5000) {
      const res = await fetch(`${busy.url}/api/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-tiny-chat', prompt: 'x', stream: false, options: { num_predict: 2 } }),
      })
      status = res.status
      await res.text()
      if (status === 200) break
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(status).toBe(200)
    expect(Date.now() - started).toBeLessThan(5000)
    // The aborted generation stopped early: far fewer tokens than the ~2,000 the context allowed.
    const metrics = await (await fetch(`${busy.url}/metrics`)).text()
    const generated = Number(/modelserver_generated_tokens_total\{model="svc-tiny-chat:latest"\} (\d+)/.exec(metrics)?.[1])
    expect(generated).toBeGreaterThan(0)
    expect(generated).toBeLessThan(1000)
  })
})

describe('Ollama parity', () => {
  const weather = {
    type: 'function',
    function: { name: 'get_weather', description: 'Current weather', parameters: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } } },
  }

  it('a streamed /api/chat tool call arrives in the chunk where it is complete, not repeated in the final line', async () => {
    const stream = await ollama.chat({
      model: 'svc-tiny-chat',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [weather],
      stream: true,
      options: { seed: 5, num_predict: 64 },
    })
    const chunks = []
    for await (const c of stream) {
      zChatChunk.parse({ ...c, created_at: String(c.created_at) })
      chunks.push(c)
    }
    const withCalls = chunks.filter((c) => (c.message.tool_calls ?? []).length > 0)
    expect(withCalls).toHaveLength(1)
    expect(withCalls[0]!.done).toBe(false)
    expect(withCalls[0]!.message.tool_calls![0]!.function.name).toBe('get_weather')
    expect(typeof withCalls[0]!.message.tool_calls![0]!.function.arguments.city).toBe('string')
    expect(chunks.at(-1)!.done).toBe(true)
    expect(chunks.at(-1)!.message.tool_calls).toBeUndefined()
    // The same call as the non-streamed reply.
    const whole = await ollama.chat({ model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools: [weather], stream: false, options: { seed: 5, num_predict: 64 } })
    expect(withCalls[0]!.message.tool_calls).toEqual(whole.message.tool_calls)
  })

  it('show reports tools only where they hold: a model with its own template layer has none, and tools are refused alike', async () => {
    expect((await ollama.show({ model: 'svc-tiny-chat' })).capabilities).toContain('tools')
    await ollama.create({ model: 'templated-chat', from: 'svc-tiny-chat', template: '{{ .System }} {{ .Prompt }}' })
    try {
      const caps = (await ollama.show({ model: 'templated-chat' })).capabilities
      expect(caps).toContain('completion')
      expect(caps).not.toContain('tools')
      const refused = await post('/api/chat', { model: 'templated-chat', messages: [{ role: 'user', content: 'x' }], tools: [weather], stream: false })
      expect([refused.status, refused.json.error]).toEqual([400, '"templated-chat" does not support tools'])
      const plain = await post('/api/chat', { model: 'templated-chat', messages: [{ role: 'user', content: 'x' }], stream: false, options: { num_predict: 2 } })
      expect(plain.status).toBe(200)
    } finally {
      await ollama.delete({ model: 'templated-chat' })
    }
    expect(ms.mismatches).toEqual([])
  })

  it('tool schemas as clients write them: a typeless member, {} parameters, $defs, anyOf, allOf are honoured; what no grammar can honour is a 400 saying where', async () => {
    const chat = (parameters: unknown, seed = 1) =>
      post('/api/chat', {
        model: 'svc-tiny-chat',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters } }],
        stream: false,
        options: { seed, num_predict: 60 },
      })
    const honoured: unknown[] = [
      { type: 'object', properties: { x: { description: 'anything' } } }, // MCP tools and pydantic `Any`
      {},
      { properties: { x: {} } },
      { type: 'object', properties: { item: { $ref: '#/$defs/Item' }, n: { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null } }, required: ['item'], $defs: { Item: { type: 'object', properties: { name: { type: 'string' } } } } },
      { type: 'object', properties: { item: { $ref: '#/definitions/Item' } }, definitions: { Item: { type: ['string', 'null'] } } },
      { allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { type: 'object', properties: { b: { type: 'string' } } }] },
      { type: 'object', properties: { when: { type: 'string', format: 'date' }, v: { type: ['object', 'null'], properties: { k: { type: 'boolean' } } } } },
    ]
    for (const parameters of honoured) {
      const res = await chat(parameters)
      expect(res.status, JSON.stringify(parameters)).toBe(200)
      expect(res.json.done).toBe(true)
    }
    const refused: Array<[unknown, string]> = [
      [{ type: 'object', properties: { x: { type: 'bogus' } } }, '/properties/x/type: unknown type "bogus"'],
      [{ type: 'object', properties: { x: { enum: [] } } }, '/properties/x/enum: enum must list at least one value'],
      [{ type: 'object', properties: { x: { anyOf: [] } } }, '/properties/x/anyOf: anyOf must list at least one schema'],
      [{ type: 'object', properties: { x: { $ref: '#/$defs/Missing' } } }, '/properties/x/$ref: a $ref must name an entry'],
      [{ type: 'string' }, `/: a tool's parameters must be a schema of type "object"`],
      [{ type: 'array', items: { type: 'string' } }, `/: a tool's parameters must be a schema of type "object"`],
    ]
    for (const [parameters, where] of refused) {
      const res = await chat(parameters)
      expect(res.status, JSON.stringify(parameters)).toBe(400)
      expect(res.json.error).toContain(`tool "f": parameters ${where}`)
    }
    const openai = await fetch(`${ms.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { x: { enum: [] } } } } }] }),
    })
    expect(openai.status).toBe(400)
    expect(((await openai.json()) as { error: { message: string } }).error.message).toContain('/properties/x/enum')
    const format = await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'hi', format: { type: 'objekt' }, stream: false })
    expect(format).toMatchObject({ status: 400, json: { error: expect.stringContaining('invalid JSON schema in format: /type: unknown type "objekt"') } })
    const single = await post('/api/generate', { model: 'svc-tiny-chat', prompt: 'hi', format: { allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }] }, stream: false, options: { seed: 1, num_predict: 60 } })
    expect(Object.keys(JSON.parse(single.json.response) as object)).toEqual(['a'])
    expect(ms.mismatches).toEqual([])
  })

  it('an integer argument the model writes past a double\'s range (4e2222): the call as the model made it, never a 500', async () => {
    // With these seeds the tiny model writes such an exponent for `a` (node-llama-cpp's integer grammar allows one).
    const add = { type: 'function', function: { name: 'add', description: 'add', parameters: { type: 'object', required: ['a', 'b'], properties: { a: { type: 'integer' }, b: { type: 'number' } } } } }
    for (const seed of [3, 9]) {
      const body = { model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'add' }], tools: [add], options: { num_predict: 80, seed } }
      const whole = await post('/api/chat', { ...body, stream: false })
      expect(whole.status, `seed ${seed}`).toBe(200)
      expect(whole.json.message.tool_calls[0].function.name).toBe('add')
      const streamed = ndjson((await post('/api/chat', body)).text)
      expect(streamed.some((l) => 'error' in l), `seed ${seed}`).toBe(false)
      expect(streamed.at(-1).done).toBe(true)
      expect(streamed.flatMap((l) => l.message?.tool_calls ?? [])).toEqual(whole.json.message.tool_calls)
    }
    expect(ms.mismatches).toEqual([])
  })

  it('the per-request template of /api/generate replaces the model’s; one this server cannot render is a 400', async () => {
    const base = { model: 'svc-tiny-chat', prompt: 'Hello', stream: false, options: { seed: 1, num_predict: 1 } }
    const chatml = await post('/api/generate', base)
    const bare = await post('/api/generate', { ...base, template: '{{ .Prompt }}' })
    const longer = await post('/api/generate', { ...base, template: 'System notes go here. {{ .Prompt }}' })
    expect(bare.status).toBe(200)
    expect(bare.json.prompt_eval_count).toBeLessThan(chatml.json.prompt_eval_count)
    expect(longer.json.prompt_eval_count).toBeGreaterThan(bare.json.prompt_eval_count)
    const refused = await post('/api/generate', { ...base, template: '{{ define "x" }}{{ end }}{{ .Prompt }}' })
    expect(refused.status).toBe(400)
    expect(refused.json.error).toMatch(/^template cannot be used by this server/)
    expect(ms.mismatches).toEqual([])
  })
})
