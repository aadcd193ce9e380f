import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { request as httpRequest } from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { ChatOpenAI } from '@langchain/openai'
import { Ollama } from 'ollama'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ModelServerClient } from '../../modelserverClient/ModelServerClient.js'
import { exposureProblem, loadModelServerConfig } from '../config.js'
import { createEngine } from '../engine/createEngine.js'
import type { Engine } from '../engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'
import { ApiKeys } from './ApiKeys.js'
import { nodeArgsFor } from '../../../scripts/nodeArgsFor.js'

/**
 * Tried as an attacker: with keys configured, nothing on the model server answers without
 * one; stock clients work given the key; keys rotate without a restart; the Host check holds on a public bind.
 */
const key = () => randomBytes(32).toString('hex')
const envKey = key()
const fileKey = key()
let engine: Engine
let dir: string
let keysFile: string
let server: TestModelServer

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  dir = await mkdtemp(path.join(os.tmpdir(), 'apikeys-'))
  keysFile = path.join(dir, 'keys')
  await writeFile(keysFile, `# rotated by the operator\n${fileKey}\n`)
  // Configured as if bound to every interface (it listens on 127.0.0.1 for the test): keys, and one extra Host name.
  server = await startTestModelServer({
    engine,
    config: { host: '0.0.0.0', apiKeys: [envKey], apiKeysFile: keysFile, allowedHosts: ['llm.example.com'] },
  })
})

afterAll(async () => {
  await server?.close()
  await engine?.dispose()
  await rm(dir, { recursive: true, force: true })
})

const bearer = (k: string) => ({ authorization: `Bearer ${k}` })

describe('model-server API keys', () => {
  it('every route answers 401 without a key or with a wrong one, in its own error shape', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/'],
      ['GET', '/api/tags'],
      ['GET', '/api/version'],
      ['POST', '/api/generate', { model: 'svc-tiny-chat', prompt: 'x' }],
      ['POST', '/api/pull', { model: 'svc-tiny-chat' }],
      ['POST', '/api/push', { model: 'svc-tiny-chat' }],
      ['DELETE', '/api/delete', { model: 'svc-tiny-chat' }],
      ['POST', '/api/create', { model: 'evil', from: 'svc-tiny-chat' }],
      ['HEAD', `/api/blobs/sha256:${'0'.repeat(64)}`],
      ['GET', '/metrics'],
      ['GET', '/v1/models'],
      ['POST', '/v1/chat/completions', { model: 'svc-tiny-chat', messages: [] }],
      ['GET', '/v2/'],
      ['GET', '/v2/library/svc-tiny-chat/manifests/latest'],
      ['GET', '/no/such/route'],
    ]
    const attempts: Array<Record<string, string>> = [{}, bearer(key()), { 'x-api-key': key() }, { authorization: envKey }]
    for (const headers of attempts) {
      for (const [method, route, body] of routes) {
        const res = await fetch(`${server.url}${route}`, {
          method,
          headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        })
        expect(res.status, `${method} ${route} ${JSON.stringify(headers)}`).toBe(401)
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/)
        if (method === 'HEAD') continue
        const json = (await res.json()) as any
        if (route.startsWith('/v1')) expect(json.error.code).toBe('invalid_api_key')
        else if (route.startsWith('/v2')) expect(json.errors[0].code).toBe('UNAUTHORIZED')
        else expect(json.error).toMatch(/^unauthorized/)
      }
    }
  })

  it('the stock ollama and openai clients work given the key (env or file; Bearer or x-api-key) and get 401 without it', async () => {
    for (const k of [envKey, fileKey]) {
      const ollama = new Ollama({ host: server.url, headers: bearer(k) })
      expect((await ollama.list()).models.map((m) => m.name)).toContain('svc-tiny-chat:latest')
      const out = await ollama.generate({ model: 'svc-tiny-chat', prompt: 'hi', stream: false, options: { num_predict: 2 } })
      expect(out.done).toBe(true)
      const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: k, maxRetries: 0 })
      expect((await openai.models.list()).data.map((m) => m.id)).toContain('svc-tiny-chat:latest')
      const chat = await openai.chat.completions.create({ model: 'svc-tiny-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 })
      expect(chat.choices[0]!.message.role).toBe('assistant')
      expect((await fetch(`${server.url}/api/tags`, { headers: { 'x-api-key': k } })).status).toBe(200)
    }
    await expect(new Ollama({ host: server.url }).list()).rejects.toMatchObject({ status_code: 401 })
    await expect(new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key(), maxRetries: 0 }).models.list()).rejects.toMatchObject({ status: 401 })
  })

  it("LangChain's ChatOpenAI works given the key and is refused (401) without it", async () => {
    const model = (apiKey: string) =>
      new ChatOpenAI({ model: 'svc-tiny-chat', apiKey, configuration: { baseURL: `${server.url}/v1` }, maxTokens: 2, temperature: 0, maxRetries: 0 })
    const answer = await model(envKey).invoke('hi')
    expect(typeof answer.content).toBe('string')
    await expect(model(key()).invoke('hi')).rejects.toMatchObject({ status: 401 })
  })

  it('the gateway sends its key (SERVICE_LLM__MODELSERVER__API_KEY) on the SDK and the streaming paths', async () => {
    const withKey = new ModelServerClient({ baseUrl: server.url, timeoutMs: 10_000, apiKey: envKey })
    expect((await withKey.listModels()).map((m) => m.name)).toContain('svc-tiny-chat:latest')
    const chunks = []
    for await (const batch of await withKey.generateStream({ model: 'svc-tiny-chat', prompt: 'hi', options: { num_predict: 2 } })) chunks.push(...batch)
    expect(chunks.at(-1)?.done).toBe(true)
    await expect(new ModelServerClient({ baseUrl: server.url, timeoutMs: 10_000 }).listModels()).rejects.toThrow(/401/)
  })

  it('rotates without a restart: a key added to the file works, a removed one is refused (on change, and at once on reload)', async () => {
    const next = key()
    await writeFile(keysFile, `${next}\n`)
    server.server.apiKeys.reload()
    expect((await fetch(`${server.url}/api/tags`, { headers: bearer(next) })).status).toBe(200)
    expect((await fetch(`${server.url}/api/tags`, { headers: bearer(fileKey) })).status).toBe(401)
    expect((await fetch(`${server.url}/api/tags`, { headers: bearer(envKey) })).status).toBe(200)
    // Without the reload: the file's change is seen within a second.
    const third = key()
    await writeFile(keysFile, `${third}\n${next}\n`)
    await new Promise((r) => setTimeout(r, 1100))
    expect((await fetch(`${server.url}/api/tags`, { headers: bearer(third) })).status).toBe(200)
  })

  it('the Host check holds on a non-loopback bind: a rebound name is 403, an allow-listed one passes', async () => {
    // node:http, not fetch: fetch does not let a caller set Host.
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: server.port, path: '/api/tags', headers: { ...bearer(envKey), host } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', reject)
        req.end()
      })
    expect(await get('evil.example')).toBe(403)
    expect(await get('evil.example:11434')).toBe(403)
    expect(await get('llm.example.com:11434')).toBe(200)
    expect(await get(`127.0.0.1:${server.port}`)).toBe(200)
  })

  it('a weak key refuses start, naming where it came from and how to make one, never echoing it', () => {
    expect(() => new ApiKeys({ keys: ['my-ollama-api-key-please'] })).toThrow(/^MODELSERVER_API_KEYS: an API key .*openssl rand -hex 32/)
    expect(() => new ApiKeys({ keys: ['ab'.repeat(32)] })).not.toThrow(/abab/)
  })

  it('per-route body limits: 2 MiB of JSON is 413 on management and registry routes, still read on chat', async () => {
    const filler = 'x'.repeat(2 << 20)
    const post = (route: string, body: unknown, method = 'POST', type = 'application/json') =>
      fetch(`${server.url}${route}`, { method, headers: { ...bearer(envKey), 'content-type': type }, body: JSON.stringify(body) })
    const del = await post('/api/delete', { model: 'svc-tiny-chat', pad: filler }, 'DELETE')
    expect(del.status).toBe(413)
    expect((await del.json()).error).toMatch(/too large/)
    expect((await post('/api/create', { model: 'big', from: 'svc-tiny-chat', system: filler })).status).toBe(413)
    const manifest = await post('/v2/library/x/manifests/latest', { schemaVersion: 2, pad: filler }, 'PUT', 'application/vnd.docker.distribution.manifest.v2+json')
    expect(manifest.status).toBe(413)
    const openai = await post('/v1/embeddings', { model: 'nope', input: filler.slice(0, 10), pad: filler })
    expect(openai.status).not.toBe(413)
    const chat = await post('/api/chat', { model: 'no-such-model', messages: [{ role: 'user', content: filler }], stream: false })
    expect(chat.status).toBe(404)
  })

  it('every response matched openapi/modelserver.yaml', () => {
    expect(server.mismatches).toEqual([])
  })
})

describe('no keys on a non-loopback bind', () => {
  it('is refused unless MODELSERVER_ALLOW_UNAUTHENTICATED=1; loopback behaves as before', () => {
    expect(exposureProblem(loadModelServerConfig({ OLLAMA_HOST: '0.0.0.0:11434' }))).toMatch(/refusing to listen on 0\.0\.0\.0 without API keys.*MODELSERVER_ALLOW_UNAUTHENTICATED=1/)
    expect(exposureProblem(loadModelServerConfig({ OLLAMA_HOST: ':11434' }))).toMatch(/every interface/)
    expect(exposureProblem(loadModelServerConfig({ MODELSERVER_HOST: '192.168.1.20' }))).toBeDefined()
    expect(exposureProblem(loadModelServerConfig({ OLLAMA_HOST: '0.0.0.0', MODELSERVER_ALLOW_UNAUTHENTICATED: '1' }))).toBeUndefined()
    expect(exposureProblem(loadModelServerConfig({ OLLAMA_HOST: '0.0.0.0', MODELSERVER_API_KEYS: key() }))).toBeUndefined()
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) expect(exposureProblem(loadModelServerConfig({ OLLAMA_HOST: host }))).toBeUndefined()
  })

  it('npm run modelserver on 0.0.0.0 without keys exits 2 with the reason (before it listens)', async () => {
    const root = path.resolve(import.meta.dirname, '../../..')
    const child = spawn(process.execPath, nodeArgsFor('src/modelserver/main.ts'), {
      cwd: root,
      env: { ...process.env, MODELSERVER_HOST: '0.0.0.0', MODELSERVER_PORT: '0', MODELSERVER_INSTALL_DEFAULTS: '0', SERVICE_DATA_DIR: dir, MODELSERVER_API_KEYS: '', MODELSERVER_API_KEYS_FILE: '', MODELSERVER_ALLOW_UNAUTHENTICATED: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (c) => (output += c))
    child.stderr.on('data', (c) => (output += c))
    const outcome = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('still running'), 60_000)
      child.stdout.on('data', () => output.includes('model server listening') && (clearTimeout(timer), resolve('listening')))
      child.once('close', (code) => (clearTimeout(timer), resolve(`exit ${code}`)))
    })
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    expect(outcome, output).toBe('exit 2')
    expect(output).toMatch(/refusing to listen on 0\.0\.0\.0 without API keys/)
  })
})
