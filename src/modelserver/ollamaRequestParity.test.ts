import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'
import { createEngine } from './engine/createEngine.js'
import type { Engine } from './engine/Engine.js'
import { createValidator, loadDoc } from '../../openapi/tests/specHelpers.js'

/** Requests as Ollama's clients send them, answered as Ollama's server answers them (server/routes.go). */
let engine: Engine
let ms: TestModelServer

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${ms.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, json: text ? (JSON.parse(text) as any) : undefined }
}
const residents = async () => ((await (await fetch(`${ms.url}/api/ps`)).json()) as { models: { name: string }[] }).models.map((m) => m.name)

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
})

afterAll(async () => {
  await ms?.close()
  await engine?.dispose()
})

describe('Ollama request parity', () => {
  it('null in an optional member is that member absent, as Go reads it; a null model is still a 400', async () => {
    const base = { model: 'svc-tiny-chat', prompt: 'Hello', stream: false, options: { seed: 5, num_predict: 4 } }
    const plain = await post('/api/generate', base)
    const nulls = { format: null, images: null, keep_alive: null, suffix: null, system: null, template: null, raw: null, think: null, context: null, logprobs: null }
    const withNulls = await post('/api/generate', { ...base, ...nulls, options: { ...base.options, temperature: null, stop: null } })
    expect(withNulls.status).toBe(200)
    expect(withNulls.json.response).toBe(plain.json.response)

    const chat = await post('/api/chat', {
      model: 'svc-tiny-chat',
      messages: [{ role: 'user', content: 'Hi', images: null, tool_calls: null, thinking: null, tool_name: null }],
      tools: null,
      format: null,
      think: null,
      keep_alive: null,
      stream: false,
      options: { num_predict: 2, top_k: null },
    })
    expect(chat).toMatchObject({ status: 200, json: { done: true, message: { role: 'assistant' } } })
    const embed = await post('/api/embed', { model: 'svc-tiny-embed', input: 'x', truncate: null, dimensions: null, keep_alive: null, options: null })
    expect(embed.json.embeddings[0]).toHaveLength(64)
    expect((await post('/api/embeddings', { model: 'svc-tiny-embed', prompt: 'x', options: null, keep_alive: null })).status).toBe(200)
    expect((await post('/api/show', { model: 'svc-tiny-chat', verbose: null, system: null, options: null })).status).toBe(200)
    const created = await post('/api/create', { model: 'nulls-copy', from: 'svc-tiny-chat', system: null, template: null, license: null, parameters: null, messages: null, quantize: null, adapters: null, files: null, stream: false })
    expect(created).toMatchObject({ status: 200, json: { status: 'success' } })
    expect((await fetch(`${ms.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: 'nulls-copy' }) })).status).toBe(200)

    expect(await post('/api/generate', { model: null, prompt: 'Hello' })).toMatchObject({ status: 400, json: { error: expect.any(String) } })
    expect((await post('/api/chat', { model: null, messages: [] })).status).toBe(400)
    expect(ms.mismatches).toEqual([])
  })

  it('/api/embed without input (absent, null, empty) loads the model and answers no vectors', async () => {
    for (const input of [undefined, null, '', []]) {
      await post('/api/generate', { model: 'svc-tiny-embed', keep_alive: 0 })
      expect(await residents()).not.toContain('svc-tiny-embed:latest')
      const answer = await post('/api/embed', { model: 'svc-tiny-embed', ...(input === undefined ? {} : { input }) })
      expect(answer, JSON.stringify(input)).toMatchObject({ status: 200, json: { model: 'svc-tiny-embed', embeddings: [] } })
      expect(await residents()).toContain('svc-tiny-embed:latest')
    }
    expect((await post('/api/embed', { model: 'missing-embedder' })).status).toBe(404)
    expect(ms.mismatches).toEqual([])
  })

  it('/api/generate with an empty prompt only loads, whatever else the body carries (a suffix, images)', async () => {
    for (const extra of [{ suffix: 'return x' }, { images: ['aGk='] }, { suffix: 'y', images: ['aGk='] }]) {
      const answer = await post('/api/generate', { model: 'svc-tiny-chat', prompt: '', stream: false, ...extra })
      expect(answer, JSON.stringify(extra)).toMatchObject({ status: 200, json: { done: true, done_reason: 'load', response: '' } })
      expect(answer.json.eval_count).toBeUndefined()
    }
    // with keep_alive 0 it unloads, as a body with only `model` does
    const unload = await post('/api/generate', { model: 'svc-tiny-chat', prompt: '', suffix: 'x', keep_alive: 0 })
    expect(unload.json).toMatchObject({ done: true, done_reason: 'unload' })
    expect(await residents()).not.toContain('svc-tiny-chat:latest')
    expect(ms.mismatches).toEqual([])
  })

  it('raw with a template, a system prompt or a context is a 400, as Ollama; raw alone generates', async () => {
    const base = { model: 'svc-tiny-chat', prompt: 'abc', raw: true, stream: false, options: { num_predict: 1 } }
    for (const extra of [{ system: 'Be brief.' }, { template: '{{ .Prompt }}' }, { context: [1, 2] }, { system: 's', prompt: '' }]) {
      expect(await post('/api/generate', { ...base, ...extra }), JSON.stringify(extra)).toEqual({
        status: 400,
        json: { error: 'raw mode does not support template, system, or context' },
      })
    }
    expect(await post('/api/generate', { ...base, system: '', template: '', context: [] })).toMatchObject({ status: 200, json: { done: true } })
    expect(ms.mismatches).toEqual([])
  })

  it('HEAD /api/blobs/sha256-<hex> names the same blob as sha256:<hex>', async () => {
    const bytes = Buffer.from('a blob named two ways')
    const hex = createHash('sha256').update(bytes).digest('hex')
    expect((await fetch(`${ms.url}/api/blobs/sha256-${hex}`, { method: 'HEAD' })).status).toBe(404)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(201)
    expect((await fetch(`${ms.url}/api/blobs/sha256-${hex}`, { method: 'HEAD' })).status).toBe(200)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'HEAD' })).status).toBe(200)
    expect(ms.mismatches).toEqual([])
  })

  it('/api/blobs checks a digest as Ollama: a malformed one is 400 (HEAD too), upper-case hex is the same blob, an existing blob POSTed again is 200', async () => {
    const bytes = Buffer.from('a blob named in upper case')
    const hex = createHash('sha256').update(bytes).digest('hex')
    const upper = hex.toUpperCase()
    for (const bad of [`sha256_${hex}`, `sha256:${hex.slice(1)}`, `sha512:${hex}`, `sha256:${'g'.repeat(64)}`]) {
      expect((await fetch(`${ms.url}/api/blobs/${bad}`, { method: 'HEAD' })).status).toBe(400)
      const post = await fetch(`${ms.url}/api/blobs/${bad}`, { method: 'POST', body: new Uint8Array(bytes) })
      expect(post.status).toBe(400)
      expect(await post.json()).toEqual({ error: expect.stringContaining('invalid digest format') })
    }
    expect((await fetch(`${ms.url}/api/blobs/sha256:${upper}`, { method: 'HEAD' })).status).toBe(404)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${upper}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(201)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'HEAD' })).status).toBe(200)
    expect((await fetch(`${ms.url}/api/blobs/sha256-${upper}`, { method: 'HEAD' })).status).toBe(200)
    // Present already: 200 whichever way the digest is written, the body not read against it.
    for (const name of [`sha256-${hex}`, `sha256:${hex}`, `sha256:${upper}`]) {
      expect((await fetch(`${ms.url}/api/blobs/${name}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(200)
    }
    expect(ms.mismatches).toEqual([])
  })

  it('POST /api/blobs/sha256-<hex> stores a new blob as sha256:<hex> would, and still refuses bytes of another digest', async () => {
    const bytes = Buffer.from('a new blob sent under its file name')
    const hex = createHash('sha256').update(bytes).digest('hex')
    const other = createHash('sha256').update('something else').digest('hex')
    const wrong = await fetch(`${ms.url}/api/blobs/sha256-${other}`, { method: 'POST', body: new Uint8Array(bytes) })
    expect(wrong.status).toBe(400)
    expect(await wrong.json()).toEqual({ error: expect.stringContaining('digest mismatch') })
    expect((await fetch(`${ms.url}/api/blobs/sha256-${hex}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(201)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'HEAD' })).status).toBe(200)
    expect(ms.mismatches).toEqual([])
  })

  it('names differing only by case are one model: a copy or create onto `tiny` replaces an installed `Tiny`, which keeps its spelling', async () => {
    const tags = async () => ((await (await fetch(`${ms.url}/api/tags`)).json()) as { models: { name: string }[] }).models.map((m) => m.name)
    expect((await post('/api/copy', { source: 'svc-tiny-chat', destination: 'Tiny' })).status).toBe(200)
    expect((await post('/api/copy', { source: 'svc-tiny-embed', destination: 'tiny' })).status).toBe(200)
    expect((await tags()).filter((n) => n.toLowerCase() === 'tiny:latest')).toEqual(['Tiny:latest'])
    expect((await post('/api/show', { model: 'tiny' })).json.capabilities).toContain('embedding')
    const created = await post('/api/create', { model: 'TINY:latest', from: 'svc-tiny-chat', system: 'Be brief.', stream: false })
    expect(created.status).toBe(200)
    expect((await tags()).filter((n) => n.toLowerCase() === 'tiny:latest')).toEqual(['Tiny:latest'])
    expect((await post('/api/show', { model: 'Tiny' })).json).toMatchObject({ system: 'Be brief.', capabilities: expect.arrayContaining(['completion']) })
    expect((await fetch(`${ms.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: 'tiny' }) })).status).toBe(200)
    expect((await tags()).filter((n) => n.toLowerCase() === 'tiny:latest')).toEqual([])
    expect(ms.mismatches).toEqual([])
  })
  it('/api/create names the new model by `model` or, as older clients do, by `name`; neither is the 400 the document promises', async () => {
    expect(await post('/api/create', { name: 'older-client', from: 'svc-tiny-chat', stream: false })).toMatchObject({ status: 200, json: { status: 'success' } })
    expect((await post('/api/show', { model: 'older-client' })).status).toBe(200)
    expect((await fetch(`${ms.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ name: 'older-client' }) })).status).toBe(200)

    const { check } = createValidator(loadDoc('modelserver'), 'modelserver.yaml')
    for (const nameless of [{ from: 'svc-tiny-chat' }, { a: 2, ['__proto__']: { model: 'x' } }, { name: '', from: 'svc-tiny-chat' }]) {
      // The document refuses what the server refuses: a client checking against it learns before sending.
      expect(check('#/components/schemas/CreateRequest', nameless)).not.toEqual([])
      expect(await post('/api/create', nameless)).toMatchObject({ status: 400, json: { error: expect.any(String) } })
    }
    expect((await post('/api/create', { from: 'svc-tiny-chat' })).json.error).toBe('model is required')
    expect(ms.mismatches).toEqual([])
  })
  it('/api/create makes the model `from` one installed or from `files`: with neither, the document and the server both refuse it, in Ollama\'s words', async () => {
    const { check } = createValidator(loadDoc('modelserver'), 'modelserver.yaml')
    // the document's own example without its `from`, and the ways a client says "nothing" for both
    for (const baseless of [{ model: 'terse-chat', system: 'You are terse.' }, { model: 'terse-chat', from: null }, { model: 'terse-chat', from: '' }, { name: 'terse-chat', files: {} }, { model: 'terse-chat', from: null, files: null }]) {
      expect(check('#/components/schemas/CreateRequest', baseless), JSON.stringify(baseless)).not.toEqual([])
      expect(await post('/api/create', baseless), JSON.stringify(baseless)).toMatchObject({ status: 400, json: { error: "neither 'from' or 'files' was specified" } })
    }
    // …and what it accepts, the server makes
    for (const based of [{ model: 'based-a', from: 'svc-tiny-chat', files: null, stream: false }, { name: 'based-b', from: 'svc-tiny-chat', files: {}, stream: false }]) {
      expect(check('#/components/schemas/CreateRequest', based), JSON.stringify(based)).toEqual([])
      expect(await post('/api/create', based), JSON.stringify(based)).toMatchObject({ status: 200, json: { status: 'success' } })
      expect((await fetch(`${ms.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: based.model ?? based.name }) })).status).toBe(200)
    }
    expect(ms.mismatches).toEqual([])
  })
})
