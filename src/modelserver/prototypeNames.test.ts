import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from './engine/createEngine.js'
import type { Engine } from './engine/Engine.js'
import { buildTinyChatModel, buildTinyLlama } from './gguf/index.js'
import { tinyChatOptions } from './gguf/tinyModels.js'
import { startTestModelServer, type TestModelServer } from '../../tests/support/startTestModelServer.js'

/**
 * Model names and tags are user input: names that are also properties of every JS object must behave like any
 * other name on every route that takes one (never found before they exist, created, listed, run, copied, pushed,
 * pulled, deleted), and must not change `Object.prototype`.
 */
let engine: Engine
let a: TestModelServer
let b: TestModelServer
const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort()

type Answer = { status: number; json: any; text: string }
async function call(server: TestModelServer, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let json: unknown
  try {
    json = text && !text.includes('\n{') ? JSON.parse(text) : undefined
  } catch {
    json = undefined
  }
  return { status: res.status, json, text }
}

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  a = await startTestModelServer({ engine, config: { installDefaults: false } })
  b = await startTestModelServer({ engine, config: { registries: [`127.0.0.1:${a.port}`] } })
})

afterAll(async () => {
  await b?.close()
  await a?.close()
  await engine?.dispose()
})

/** Names whose parts are Object.prototype members; `shown` is how /api/tags lists them. */
const names = [
  { name: 'constructor', shown: 'constructor:latest' },
  { name: 'toString:__proto__', shown: 'toString:__proto__' },
  { name: 'hasOwnProperty/valueOf:constructor', shown: 'hasOwnProperty/valueOf:constructor' },
  { name: 'isPrototypeOf:hasOwnProperty', shown: 'isPrototypeOf:hasOwnProperty' },
]

describe('names such as __proto__, constructor, toString, hasOwnProperty', () => {
  it('are not installed before they are created: every route that takes a name answers 404', async () => {
    for (const { name } of names) {
      const notFound = { error: `model '${name}' not found` }
      expect(await call(b, 'POST', '/api/generate', { model: name, prompt: 'x', stream: false }), name).toMatchObject({ status: 404, json: notFound })
      expect(await call(b, 'POST', '/api/chat', { model: name, messages: [{ role: 'user', content: 'x' }], stream: false })).toMatchObject({ status: 404, json: notFound })
      expect(await call(b, 'POST', '/api/embed', { model: name, input: 'x' })).toMatchObject({ status: 404, json: notFound })
      expect(await call(b, 'POST', '/api/embeddings', { model: name, prompt: 'x' })).toMatchObject({ status: 404, json: notFound })
      expect(await call(b, 'POST', '/api/show', { model: name })).toMatchObject({ status: 404, json: notFound })
      expect(await call(b, 'DELETE', '/api/delete', { model: name })).toMatchObject({ status: 404, json: notFound })
      expect(await call(b, 'POST', '/api/copy', { source: name, destination: 'x' })).toMatchObject({ status: 404, json: notFound })
      expect(await call(b, 'POST', '/api/create', { model: 'x', from: name, stream: false })).toMatchObject({ status: 404, json: notFound })
      // The OpenAI-compatible routes take the same names.
      for (const [path, body] of [
        ['/v1/chat/completions', { model: name, messages: [{ role: 'user', content: 'x' }] }],
        ['/v1/completions', { model: name, prompt: 'x' }],
        ['/v1/embeddings', { model: name, input: 'x' }],
      ] as const) {
        const answer = await call(b, 'POST', path, body)
        expect(answer.status, `${path} ${name}`).toBe(404)
        expect(answer.json.error.message, `${path} ${name}`).toContain(name)
      }
      if (!name.includes('/')) expect((await call(b, 'GET', `/v1/models/${encodeURIComponent(name)}`)).status, name).toBe(404)
      expect((await call(b, 'POST', '/api/push', { model: `127.0.0.1:${a.port}/${name.includes('/') ? name : `library/${name}`}`, insecure: true })).status).toBe(404)
      expect((await call(b, 'POST', '/api/pull', { model: `127.0.0.1:${a.port}/${name.includes('/') ? name : `library/${name}`}`, insecure: true, stream: false })).status).toBe(404)
    }
    const [repo, tag] = ['constructor', '__proto__']
    const manifest = await call(a, 'GET', `/v2/library/${repo}/manifests/${tag}`)
    expect(manifest).toMatchObject({ status: 404, json: { errors: [{ code: 'MANIFEST_UNKNOWN' }] } })
    expect((await call(a, 'HEAD', `/v2/library/toString/manifests/hasOwnProperty`)).status).toBe(404)
  })

  it('a model part `__proto__` is malformed (400), as any name starting with `_`', async () => {
    for (const [method, path, body] of [
      ['POST', '/api/generate', { model: '__proto__', prompt: 'x' }],
      ['POST', '/api/show', { model: '__proto__' }],
      ['POST', '/api/create', { model: '__proto__', from: 'svc-tiny-chat' }],
      ['POST', '/api/copy', { source: 'svc-tiny-chat', destination: '__proto__' }],
      ['DELETE', '/api/delete', { model: '__proto__' }],
      ['POST', '/api/pull', { model: '__proto__' }],
      ['POST', '/api/push', { model: '__proto__' }],
    ] as const) {
      const answer = await call(b, method, path, body)
      expect(answer, `${method} ${path}`).toMatchObject({ status: 400, json: { error: "invalid model name '__proto__'" } })
    }
    const v2 = await call(a, 'GET', '/v2/__proto__/constructor/manifests/latest')
    expect(v2).toMatchObject({ status: 400, json: { errors: [{ code: 'NAME_INVALID' }] } })
  })

  it('are created (from a model, from a blob), listed, run, copied, pushed, pulled and deleted like any name', async () => {
    for (const { name } of names) {
      expect((await call(b, 'POST', '/api/create', { model: name, from: 'svc-tiny-chat', system: `I am ${name}`, stream: false })).status, name).toBe(200)
      const show = await call(b, 'POST', '/api/show', { model: name })
      expect(show.status).toBe(200)
      expect(show.json.system).toBe(`I am ${name}`)
      const generated = await call(b, 'POST', '/api/generate', { model: name, prompt: 'x', stream: false, options: { num_predict: 2, seed: 1 } })
      expect(generated.status).toBe(200)
      expect(generated.json.model).toBe(name)
      const chat = await call(b, 'POST', '/api/chat', { model: name, messages: [{ role: 'user', content: 'x' }], stream: false, options: { num_predict: 2 } })
      expect(chat.status).toBe(200)
      const completion = await call(b, 'POST', '/v1/chat/completions', { model: name, messages: [{ role: 'user', content: 'x' }], max_tokens: 2 })
      expect(completion.status).toBe(200)
      expect(completion.json.model).toBe(name)
      if (!name.includes('/')) expect((await call(b, 'GET', `/v1/models/${encodeURIComponent(name)}`)).status, name).toBe(200)
    }
    const listed = (await call(b, 'GET', '/v1/models')).json.data.map((m: { id: string }) => m.id)
    expect(listed).toEqual(expect.arrayContaining(names.map((n) => n.shown)))
    const tags = (await call(b, 'GET', '/api/tags')).json.models.map((m: { name: string }) => m.name)
    expect(tags).toEqual(expect.arrayContaining(names.map((n) => n.shown)))
    const ps = (await call(b, 'GET', '/api/ps')).json.models.map((m: { name: string }) => m.name)
    expect(ps).toEqual(expect.arrayContaining(['constructor:latest']))
    expect((await call(b, 'GET', '/metrics')).text).toMatch(/modelserver_generated_tokens_total\{model="constructor:latest"\} [1-9]/)

    // An embedding model under such a name.
    expect((await call(b, 'POST', '/api/copy', { source: 'svc-tiny-embed', destination: 'valueOf:toString' })).status).toBe(200)
    expect((await call(b, 'POST', '/api/embed', { model: 'valueOf:toString', input: 'x' })).json.embeddings).toHaveLength(1)
    expect((await call(b, 'POST', '/api/embeddings', { model: 'valueOf:toString', prompt: 'x' })).json.embedding).toHaveLength(64)
    expect((await call(b, 'POST', '/v1/embeddings', { model: 'valueOf:toString', input: 'x' })).json.data).toHaveLength(1)

    // A GGUF uploaded as a blob, whose file name is `__proto__`.
    const bytes = buildTinyChatModel()
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    expect([200, 201]).toContain((await fetch(`${b.url}/api/blobs/${digest}`, { method: 'POST', body: new Uint8Array(bytes) })).status)
    const fromBlob = await call(b, 'POST', '/api/create', { model: 'hasOwnProperty', files: JSON.parse(`{"__proto__": "${digest}"}`), stream: false })
    expect(fromBlob.status).toBe(200)
    expect((await call(b, 'POST', '/api/show', { model: 'hasOwnProperty' })).json.capabilities).toContain('completion')

    // Copy between such names, and create `from` one.
    expect((await call(b, 'POST', '/api/copy', { source: 'constructor', destination: 'toString:constructor' })).status).toBe(200)
    expect((await call(b, 'POST', '/api/create', { model: 'valueOf', from: 'toString:__proto__', stream: false })).status).toBe(200)
    expect((await call(b, 'POST', '/api/show', { model: 'valueOf' })).json.system).toBe('I am toString:__proto__')

    // Push to the other instance and pull back under the same name on a third one.
    const remote = `127.0.0.1:${a.port}/library/constructor:__proto__`
    expect((await call(b, 'POST', '/api/copy', { source: 'constructor', destination: remote })).status).toBe(200)
    expect((await call(b, 'POST', '/api/push', { model: remote, insecure: true, stream: false })).status).toBe(200)
    const served = await call(a, 'GET', '/v2/library/constructor/manifests/__proto__')
    expect(served.status).toBe(200)
    expect((await call(a, 'POST', '/api/show', { model: 'constructor:__proto__' })).json.system).toBe('I am constructor')
    expect((await call(b, 'DELETE', '/api/delete', { model: remote })).status).toBe(200)
    expect((await call(b, 'POST', '/api/pull', { model: remote, insecure: true, stream: false })).status).toBe(200)
    expect((await call(b, 'POST', '/api/show', { model: remote })).json.system).toBe('I am constructor')

    // Registry upload sessions under such repository names.
    const start = await fetch(`${a.url}/v2/library/toString/blobs/uploads/`, { method: 'POST' })
    expect(start.status).toBe(202)
    const location = new URL(start.headers.get('location')!, a.url)
    expect(location.pathname).toMatch(/^\/v2\/library\/toString\/blobs\/uploads\//)
    location.searchParams.set('digest', `sha256:${createHash('sha256').update('x').digest('hex')}`)
    expect((await fetch(location, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } })).status).toBe(201)

    for (const name of [...names.map((n) => n.name), 'valueOf:toString', 'hasOwnProperty', 'toString:constructor', 'valueOf', remote]) {
      expect((await call(b, 'DELETE', '/api/delete', { model: name })).status, name).toBe(200)
      expect((await call(b, 'POST', '/api/show', { model: name })).status, name).toBe(404)
    }
  }, 120_000)

  it('JSON schemas (format, tool parameters) whose property and $defs names are prototype members are ordinary schemas', async () => {
    // JSON.parse: `__proto__` is an own key of the request body, as any client sends it.
    const format = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"boolean"},"constructor":{"type":"boolean"},"toString":{"$ref":"#/$defs/hasOwnProperty"}},"required":["__proto__","constructor","toString"],"$defs":{"hasOwnProperty":{"type":"boolean"}}}')
    const generated = await call(b, 'POST', '/api/generate', { model: 'svc-tiny-chat', prompt: 'x', format, stream: false, options: { seed: 1, num_predict: 64 } })
    expect(generated.status, generated.text).toBe(200)
    const answer = JSON.parse(generated.json.response) as Record<string, unknown>
    for (const key of ['__proto__', 'constructor', 'toString']) {
      expect(Object.hasOwn(answer, key), key).toBe(true)
      expect(typeof answer[key], key).toBe('boolean')
    }
    const parameters = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string","enum":["a"]},"valueOf":{"type":"boolean"}},"required":["__proto__"]}')
    const chat = await call(b, 'POST', '/api/chat', {
      model: 'svc-tiny-chat',
      messages: [{ role: 'user', content: 'x' }],
      tools: [{ type: 'function', function: { name: 'constructor', description: 'x', parameters } }],
      stream: false,
      options: { seed: 1, num_predict: 48 },
    })
    expect(chat.status, chat.text).toBe(200)
  })

  it('a GGUF whose metadata keys are prototype members: created, shown with those keys as its own model_info entries', async () => {
    const bytes = buildTinyLlama({
      ...tinyChatOptions,
      name: 'metadata-keys',
      extraMetadata: [
        ['constructor', { kind: 'string', value: 'c' }],
        ['svc.toString', { kind: 'u32', value: 7 }],
        ['svc.hasOwnProperty', { kind: 'array', of: 'string', value: ['h'] }],
        ['valueOf.isPrototypeOf', { kind: 'bool', value: true }],
      ],
    }).bytes
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`
    expect([200, 201]).toContain((await fetch(`${b.url}/api/blobs/${digest}`, { method: 'POST', body: new Uint8Array(bytes) })).status)
    expect((await call(b, 'POST', '/api/create', { model: 'metadata-keys', files: { 'm.gguf': digest }, stream: false })).status).toBe(200)
    const show = await call(b, 'POST', '/api/show', { model: 'metadata-keys' })
    expect(show.status, show.text).toBe(200)
    expect(show.json.model_info).toMatchObject({ constructor: 'c', 'svc.toString': 7, 'svc.hasOwnProperty': ['h'], 'valueOf.isPrototypeOf': true, 'general.architecture': 'llama' })
    expect((await call(b, 'POST', '/api/generate', { model: 'metadata-keys', prompt: 'x', stream: false, options: { num_predict: 2 } })).status).toBe(200)
    expect((await call(b, 'DELETE', '/api/delete', { model: 'metadata-keys' })).status).toBe(200)
  }, 60_000)

  it('left Object.prototype untouched, and every answer matched the document', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore)
    expect(({} as Record<string, unknown>).system).toBeUndefined()
    expect([...a.mismatches, ...b.mismatches]).toEqual([])
  })
})
