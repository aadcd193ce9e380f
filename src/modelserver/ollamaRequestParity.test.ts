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
    // A new blob is taken under `sha256:` and lower-case hex only, as Ollama compares the path as written.
    const shouting = await fetch(`${ms.url}/api/blobs/sha256:${upper}`, { method: 'POST', body: new Uint8Array(bytes) })
    expect(shouting.status).toBe(400)
    expect(await shouting.json()).toEqual({ error: `digest mismatch, expected "sha256:${upper}", got "sha256:${hex}"` })
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'HEAD' })).status).toBe(404)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(201)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'HEAD' })).status).toBe(200)
    expect((await fetch(`${ms.url}/api/blobs/sha256-${upper}`, { method: 'HEAD' })).status).toBe(200)
    // Present already: 200 whichever way the digest is written, the body not read against it.
    for (const name of [`sha256-${hex}`, `sha256:${hex}`, `sha256:${upper}`]) {
      expect((await fetch(`${ms.url}/api/blobs/${name}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(200)
    }
    expect(ms.mismatches).toEqual([])
  })

  it('POST /api/blobs/sha256-<hex> of a new blob is the 400 Ollama answers (digest mismatch with the `sha256:` form), nothing kept', async () => {
    const bytes = Buffer.from('a new blob sent under its file name')
    const hex = createHash('sha256').update(bytes).digest('hex')
    const other = createHash('sha256').update('something else').digest('hex')
    for (const sent of [hex, other]) {
      const refused = await fetch(`${ms.url}/api/blobs/sha256-${sent}`, { method: 'POST', body: new Uint8Array(bytes) })
      expect(refused.status).toBe(400)
      expect(await refused.json()).toEqual({ error: `digest mismatch, expected "sha256-${sent}", got "sha256:${hex}"` })
    }
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'HEAD' })).status).toBe(404)
    expect((await fetch(`${ms.url}/api/blobs/sha256:${hex}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(201)
    // Present now: the dash form finds it, as Ollama's file lookup does.
    expect((await fetch(`${ms.url}/api/blobs/sha256-${hex}`, { method: 'POST', body: new Uint8Array(bytes) })).status).toBe(200)
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
  it('`model` and `name` are read as Go reads them: a null or empty one is absent, so the other names the model', async () => {
    const { check } = createValidator(loadDoc('modelserver'), 'modelserver.yaml')
    for (const schema of ['ShowRequest', 'CreateRequest', 'DeleteRequest', 'PullRequest', 'PushRequest']) {
      // a create also needs what to make the model of
      const rest = schema === 'CreateRequest' ? { from: 'svc-tiny-chat' } : {}
      for (const both of [{ model: null, name: 'x' }, { name: null, model: 'x' }, { model: '', name: 'x' }, { name: '', model: 'x' }]) {
        expect(check(`#/components/schemas/${schema}`, { ...both, ...rest }), `${schema} ${JSON.stringify(both)}`).toEqual([])
      }
      for (const neither of [{ model: null }, { model: null, name: null }, { model: '', name: null }]) {
        expect(check(`#/components/schemas/${schema}`, { ...neither, ...rest }), `${schema} ${JSON.stringify(neither)}`).not.toEqual([])
      }
    }
    for (const pair of [{ model: null, name: 'svc-tiny-chat' }, { name: null, model: 'svc-tiny-chat' }, { model: '', name: 'svc-tiny-chat' }]) {
      expect((await post('/api/show', pair)).json, JSON.stringify(pair)).toMatchObject({ capabilities: expect.arrayContaining(['completion']) })
    }
    const created = await post('/api/create', { model: null, name: 'named-by-name', from: 'svc-tiny-chat', stream: false })
    expect(created).toMatchObject({ status: 200, json: { status: 'success' } })
    const remove = (body: unknown) => fetch(`${ms.url}/api/delete`, { method: 'DELETE', body: JSON.stringify(body) })
    expect((await remove({ name: null, model: 'named-by-name' })).status).toBe(200)
    expect((await remove({ model: null, name: 'named-by-name' })).status).toBe(404)
    // pull and push reach the name (a registry outside the allow-list, a model not installed), not a missing-model 400
    expect((await post('/api/pull', { model: null, name: 'elsewhere.example/ns/m', stream: false })).json.error).not.toBe('model is required')
    expect((await post('/api/push', { name: null, model: 'not-installed-here', stream: false })).json.error).not.toBe('model is required')
    for (const neither of [{ model: null }, { model: null, name: null }, { model: '', name: '' }]) {
      expect(await post('/api/show', neither), JSON.stringify(neither)).toEqual({ status: 400, json: { error: 'model is required' } })
    }
    expect(ms.mismatches).toEqual([])
  })
  it('a message or tool call member sent as null is its zero value, as Go decodes it: the same conversation as with empty ones', async () => {
    const { check } = createValidator(loadDoc('modelserver'), 'modelserver.yaml')
    const ask = (messages: unknown[]) => post('/api/chat', { model: 'svc-tiny-chat', messages, stream: false, options: { seed: 7, temperature: 0, num_predict: 3 } })
    const zero = [
      { role: 'user', content: '' },
      { role: 'assistant', content: '', tool_calls: [{ function: { index: 0, name: '', arguments: {} } }] },
      { role: 'tool', content: '', tool_name: 'lookup' },
      { role: 'user', content: 'And now?' },
    ]
    const nulls = [
      { role: 'user', content: null },
      { role: 'assistant', content: null, tool_calls: [{ id: null, type: null, function: { index: null, name: null, arguments: null } }] },
      { role: 'tool', tool_name: 'lookup' },
      { role: 'user', content: 'And now?' },
    ]
    expect(check('#/components/schemas/ChatRequest', { model: 'm', messages: nulls })).toEqual([])
    const expected = await ask(zero)
    expect(expected.status).toBe(200)
    const answered = await ask(nulls)
    expect(answered).toMatchObject({ status: 200, json: { done: true, message: { role: 'assistant', content: expected.json.message.content } } })
    expect(answered.json.prompt_eval_count).toBe(expected.json.prompt_eval_count)
    // a call whose `function` is null or absent is a call of "" with {}, as its zero value
    for (const call of [{ function: null }, {}]) {
      const again = await ask([...zero.slice(0, 1), { role: 'assistant', content: '', tool_calls: [call] }, ...zero.slice(2)])
      expect(again.json.prompt_eval_count, JSON.stringify(call)).toBe(expected.json.prompt_eval_count)
    }
    const created = await post('/api/create', { model: 'null-messages', from: 'svc-tiny-chat', messages: [{ role: 'user', content: null }], stream: false })
    expect(created.status).toBe(200)
    expect((await post('/api/show', { model: 'null-messages' })).json.messages).toEqual([{ role: 'user', content: '' }])
    expect((await fetch(`${ms.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: 'null-messages' }) })).status).toBe(200)
    expect(ms.mismatches).toEqual([])
  })
  it('a new name takes the spelling each of its parts has in an installed model, as Ollama (getExistingName)', async () => {
    const tags = async () => ((await (await fetch(`${ms.url}/api/tags`)).json()) as { models: { name: string }[] }).models.map((m) => m.name)
    expect((await post('/api/copy', { source: 'svc-tiny-chat', destination: 'Spelled:latest' })).status).toBe(200)
    // the model part as installed, the tag as `latest` is installed, the namespace as `library`
    expect((await post('/api/copy', { source: 'svc-tiny-chat', destination: 'spelled:V2' })).status).toBe(200)
    expect((await post('/api/create', { model: 'SPELLED:v2-b', from: 'svc-tiny-chat', stream: false })).status).toBe(200)
    expect((await post('/api/copy', { source: 'svc-tiny-chat', destination: 'Library/other-spelled:LATEST' })).status).toBe(200)
    const names = (await tags()).filter((n) => n.toLowerCase().includes('spelled'))
    expect(names.sort()).toEqual(['Spelled:V2', 'Spelled:latest', 'Spelled:v2-b', 'other-spelled:latest'])
    for (const name of names) expect((await fetch(`${ms.url}/api/delete`, { method: 'DELETE', body: JSON.stringify({ model: name.toUpperCase() }) })).status).toBe(200)
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
