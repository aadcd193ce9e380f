import { randomBytes } from 'node:crypto'
import { ChatOpenAI } from '@langchain/openai'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../../../tests/support/startTestGateway.js'
import { createEngine } from '../../modelserver/engine/createEngine.js'
import type { Engine } from '../../modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'

// Against a live model server: the stock OpenAI clients through /llm/v1 with a
// session token or an /llm API key, the overlord bearer on session and cost routes, /coreagent recall.

const overlord = privateKeyToAccount(generatePrivateKey())
const alice = privateKeyToAccount(generatePrivateKey())
const bob = privateKeyToAccount(generatePrivateKey())
let engine: Engine
let ms: TestModelServer
let gw: TestGateway
let aliceToken: string
let bobToken: string

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: {
      SHADOW_OVERLORD_ADDRESS: overlord.address,
      SHADOW_JWT_SECRET: randomBytes(32).toString('hex'),
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '1000',
      SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
    },
  })
  aliceToken = await gw.login(alice)
  bobToken = await gw.login(bob)
})

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
})

const request = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? null : JSON.stringify(body),
    redirect: 'manual',
  })
const session = (token: string) => ({ 'x-session-token': token })
const openai = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/llm/v1`, maxRetries: 0 })

describe('OpenAI-compatible /llm/v1 with the stock clients', () => {
  it('openai: chat (whole and streamed), embeddings and models.list with the session token as apiKey', async () => {
    const client = openai(aliceToken)
    // The random tiny model may end at once for some seeds: take the first seed that says something.
    let seed = 0
    let chat: Awaited<ReturnType<typeof client.chat.completions.create>> & { object: string } = undefined as never
    while (seed < 20 && !(chat?.usage?.completion_tokens! > 1)) {
      seed++
      chat = await client.chat.completions.create({ model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 12, seed })
    }
    expect(chat.object).toBe('chat.completion')
    expect(chat.choices[0]!.message.role).toBe('assistant')
    expect(chat.usage!.completion_tokens).toBeGreaterThan(1)

    const stream = await client.chat.completions.create({ model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 12, seed, stream: true })
    let text = ''
    let chunks = 0
    for await (const chunk of stream) {
      chunks++
      text += chunk.choices[0]?.delta?.content ?? ''
    }
    expect(chunks).toBeGreaterThan(1)
    // Same seed, same answer: the streamed text is the whole one.
    expect(text).toBe(chat.choices[0]!.message.content)

    const embeddings = await client.embeddings.create({ model: 'svc-tiny-embed:latest', input: ['one', 'two'] })
    expect(embeddings.data).toHaveLength(2)
    expect(embeddings.data[0]!.embedding.length).toBeGreaterThan(0)

    const ids = []
    for await (const model of client.models.list()) ids.push(model.id)
    expect(ids).toEqual(expect.arrayContaining(['svc-tiny-chat:latest', 'svc-tiny-embed:latest', 'ceo', 'archivist']))
  })

  it('a marketplace agent id is a model name; an unknown model is a 404 in OpenAI shape', async () => {
    const client = openai(aliceToken)
    const viaAgent = await client.chat.completions.create({ model: 'ceo', messages: [{ role: 'user', content: 'Status?' }], max_tokens: 4 })
    expect(viaAgent.model).toBe('svc-tiny-chat:latest')
    const error = await client.chat.completions.create({ model: 'llama9:latest', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.NotFoundError)
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ message: expect.stringContaining('llama9') })
  })

  it('LangChain ChatOpenAI works through the gateway', async () => {
    const model = new ChatOpenAI({ model: 'svc-tiny-chat:latest', apiKey: aliceToken, configuration: { baseURL: `${gw.url}/llm/v1` }, maxTokens: 8, maxRetries: 0 })
    const reply = await model.invoke('Hello')
    expect(typeof reply.content).toBe('string')
    const pieces = []
    for await (const piece of await model.stream('Hello')) pieces.push(piece)
    expect(pieces.length).toBeGreaterThan(1)
  })

  it('without a session or key: 401; X-Session-Token works as well as the bearer', async () => {
    expect((await request('GET', '/llm/v1/models', {})).status).toBe(401)
    expect((await request('GET', '/llm/v1/models', { authorization: 'Bearer st_not-a-session' })).status).toBe(401)
    expect((await request('GET', '/llm/v1/models', session(aliceToken))).status).toBe(200)
    const bad = await request('POST', '/llm/v1/chat/completions', session(aliceToken), { model: 'svc-tiny-chat:latest', messages: [] })
    expect(bad.status).toBe(400)
    // the gateway's own refusal in OpenAI's shape, as every refusal of /llm/v1 but the 402
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_request', param: 'messages' } })
  })
})

describe('/llm API keys', () => {
  it('a key drives the openai client like a session token and stops working the moment it is revoked', async () => {
    const created = await request('POST', '/llm/keys', session(aliceToken), { name: 'laptop' })
    expect(created.status).toBe(201)
    const key = (await created.json()) as { key: string; key_id: string; prefix: string }
    expect(key.key).toMatch(/^sk-p2s-/)
    expect(key.key.startsWith(key.prefix)).toBe(true)

    const client = openai(key.key)
    const reply = await client.completions.create({ model: 'svc-tiny-chat:latest', prompt: 'Three words:', max_tokens: 4 })
    expect(reply.object).toBe('text_completion')

    const listed = (await (await request('GET', '/llm/keys', session(aliceToken))).json()) as { keys: Record<string, unknown>[] }
    const mine = listed.keys.find((k) => k.key_id === key.key_id)!
    expect(mine).toMatchObject({ name: 'laptop', revoked_at: null, last_used_at: expect.any(Number) })
    expect(JSON.stringify(listed)).not.toContain(key.key)
    // Like every session GET, the list also takes the browser's session cookie; a state change never does.
    const viaCookie = await request('GET', '/llm/keys', { cookie: `svc_session=${aliceToken}` })
    expect(viaCookie.status).toBe(200)
    expect(((await viaCookie.json()) as { keys: { key_id: string }[] }).keys.map((k) => k.key_id)).toContain(key.key_id)
    expect((await request('POST', '/llm/keys', { cookie: `svc_session=${aliceToken}` }, {})).status).toBe(401)
    // Another wallet neither sees nor revokes it.
    expect(((await (await request('GET', '/llm/keys', session(bobToken))).json()) as { keys: unknown[] }).keys).toEqual([])
    expect((await request('DELETE', `/llm/keys/${key.key_id}`, session(bobToken))).status).toBe(404)

    const revoked = await request('DELETE', `/llm/keys/${key.key_id}`, session(aliceToken))
    expect(revoked.status).toBe(200)
    expect(((await revoked.json()) as { revoked_at: number | null }).revoked_at).toEqual(expect.any(Number))
    const after = await client.completions.create({ model: 'svc-tiny-chat:latest', prompt: 'x', max_tokens: 2 }).catch((e: unknown) => e)
    expect(after).toBeInstanceOf(OpenAI.AuthenticationError)

    // Both are catalogue events naming the key, never containing it.
    for (const kind of ['llm.key.created', 'llm.key.revoked']) {
      const events = await (await request('GET', `/insight/catalogue/recent?kind=${kind}`, session(aliceToken))).text()
      expect(events).toContain(key.key_id)
      expect(events).not.toContain(key.key)
    }
  })
})

describe('tier matrix: the shadow-overlord bearer reads, it does not write, spend or mint (seed 000 §4.2 with §5.2)', () => {
  it('reads session pages; every writing, spending or minting session route is 401 with the bearer alone; a bad bearer is the gate 401', async () => {
    const small = await startTestGateway({
      modelServerUrl: ms.url,
      env: { SHADOW_OVERLORD_ADDRESS: overlord.address, SHADOW_JWT_SECRET: randomBytes(32).toString('hex'), SERVICE_QUOTA__COST_CALLS_PER_DAY: '1', SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000' },
    })
    try {
      const challenge = (await (await fetch(`${small.url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scope: 'auth' }) })).json()) as { nonce: string; message: string }
      const verified = await fetch(`${small.url}/admin/shadow/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ nonce: challenge.nonce, signature: await overlord.signMessage({ message: challenge.message }) }) })
      const bearer = { authorization: `Bearer ${((await verified.json()) as { jwt: string }).jwt}` }
      const send = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
        fetch(`${small.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })

      for (const path of ['/journal', '/llm/usage', '/llm/keys']) expect((await send('GET', path, bearer)).status, path).toBe(200)

      // A stolen bearer: without these checks each of these would answer 2xx, the key minted with it outlived it, and cost
      // calls made with it had no quota.
      const writes: Array<[string, string, unknown]> = [
        ['POST', '/llm/keys', { name: 'stolen' }],
        ['DELETE', '/llm/keys/key_0000000000000000000000000', undefined],
        ['POST', '/llm/completion', { prompt: 'Hi', options: { num_predict: 2 } }],
        ['POST', '/llm/chat', { messages: [{ role: 'user', content: 'hi' }] }],
        ['POST', '/llm/generate', { prompt: 'Hi', stream: false, options: { num_predict: 2 } }],
        ['POST', '/llm/test', {}],
        ['POST', '/coreagent/memories', { text: 'planted by the thief' }],
        ['POST', '/coreagent/memories/search', { query: 'x' }],
        ['POST', '/coreagent/interact', { agent: 'archivist', prompt: 'x' }],
        ['POST', '/feedback', { message: 'x' }],
        ['POST', '/agents/ceo/evolve', { goal: 'x' }],
        ['POST', '/coordinator/tasks', { goal: 'plan', agents: ['ceo'] }],
        ['POST', '/boardroom/convene', { company: 'NOPE', motion: 'x' }],
        ['POST', '/marketplace/agent/call', { agent: 'ceo', prompt: 'x' }],
        ['POST', '/marketplace/modelserver/ingest', { prompt: 'x' }],
      ]
      for (const [method, path, body] of writes) {
        const res = await send(method, path, bearer, body)
        expect(res.status, `${method} ${path}`).toBe(401)
        expect(await res.json()).toMatchObject({ code: 'auth_required' })
      }
      expect(((await (await send('GET', '/llm/keys', bearer)).json()) as { keys: unknown[] }).keys).toEqual([])

      const token = await small.login(privateKeyToAccount(generatePrivateKey()))
      const call = (headers: Record<string, string>) => send('POST', '/llm/completion', headers, { prompt: 'Hi', options: { num_predict: 2 } })
      expect((await call(session(token))).status).toBe(200)
      const over = await call(session(token))
      expect(over.status).toBe(402)
      expect(await over.json()).toMatchObject({ error: 'quota_exceeded' })

      const forged = await call({ authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.invalid' })
      expect(forged.status).toBe(401)
      expect(await forged.json()).toMatchObject({ code: 'auth_required' })
      expect(small.validationErrors).toEqual([])
    } finally {
      await small.close()
    }
  })
})

describe('/coreagent: memories are searched by cosine similarity', () => {
  // The tiny embedding model has random weights: only the text's own tokens make vectors close. The test is
  // meaningful all the same: among several unrelated memories, the identical text ranks first with score 1.
  const facts = [
    'The treasury sink is the company multisig.',
    'Storage is priced per byte at upstream cost plus a quarter.',
    'The boardroom carries a motion with more than fifty weight for.',
    'Receipts are committed in a daily Merkle batch.',
  ]

  it('a memory logged through /coreagent is recalled first by the same text, for its wallet only', async () => {
    const ids: string[] = []
    for (const text of facts) {
      const res = await request('POST', '/coreagent/memories', session(aliceToken), { text })
      expect(res.status).toBe(201)
      ids.push(((await res.json()) as { memory_id: string }).memory_id)
    }
    for (const [i, text] of facts.entries()) {
      const res = await request('POST', '/coreagent/memories/search', session(aliceToken), { query: text, limit: 4 })
      const { memories } = (await res.json()) as { memories: { memory_id: string; score: number }[] }
      expect(memories[0]!.memory_id).toBe(ids[i])
      expect(memories[0]!.score).toBeCloseTo(1, 5)
      expect(memories[1]!.score).toBeLessThan(memories[0]!.score)
    }
    const bobs = (await (await request('POST', '/coreagent/memories/search', session(bobToken), { query: facts[0] })).json()) as { memories: unknown[] }
    expect(bobs.memories).toEqual([])
  })

  it('an interaction recalls the closest memory into the agent prompt and logs itself', async () => {
    const res = await request('POST', '/coreagent/interact', session(aliceToken), { agent: 'archivist', prompt: facts[1], recall: 2 })
    expect(res.status).toBe(200)
    const turn = (await res.json()) as { recalled: { text: string }[]; memory_id: string; agent: string }
    expect(turn.recalled[0]!.text).toBe(facts[1])
    expect(turn.memory_id).toMatch(/^mem_/)
    const again = (await (await request('POST', '/coreagent/memories/search', session(aliceToken), { query: facts[1], agent: 'archivist' })).json()) as { memories: { memory_id: string }[] }
    expect(again.memories[0]!.memory_id).toBe(turn.memory_id)
  })

  it('unknown agent 404, bad input 400', async () => {
    expect((await request('POST', '/coreagent/interact', session(aliceToken), { agent: 'oracle', prompt: 'x' })).status).toBe(404)
    const bad = await request('POST', '/coreagent/memories/search', session(aliceToken), { query: '', limit: 1000 })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: 'invalid_request' })
  })
})

describe('/llm test and generate', () => {
  it('test reports the model and latency; generate passes Ollama replies through (JSON and NDJSON)', async () => {
    const test = await request('POST', '/llm/test', session(aliceToken), {})
    expect(test.status).toBe(200)
    expect(await test.json()).toMatchObject({ ok: true, model: 'svc-tiny-chat:latest', modelserver: ms.url })

    const whole = await request('POST', '/llm/generate', session(aliceToken), { prompt: 'Hi', stream: false, options: { num_predict: 3 } })
    expect(whole.status).toBe(200)
    expect(await whole.json()).toMatchObject({ done: true, total_duration: expect.any(Number) })
    // A fixed seed: with a random one the tiny model may end on its first token (one line, nothing to show streaming).
    const streamed = await request('POST', '/llm/generate', session(aliceToken), { prompt: 'Hi', options: { num_predict: 5, seed: 42 } })
    expect(streamed.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = (await streamed.text()).trim().split('\n').map((l) => JSON.parse(l) as { done: boolean })
    expect(lines.length).toBeGreaterThan(1)
    expect(lines.at(-1)!.done).toBe(true)
  })
})

describe('a blank model name', () => {
  it('is the gateway\'s own 400 invalid_request (its document refuses it), never forwarded for the model server to refuse', async () => {
    for (const [path, body] of [['/llm/test', { model: '\f' }], ['/llm/generate', { prompt: 'Hi', model: ' ', stream: false }]] as const) {
      const res = await request('POST', path, session(aliceToken), body)
      expect(res.status, path).toBe(400)
      expect(await res.json(), path).toMatchObject({ error: 'invalid_request' })
    }
  })
})

describe('model server down', () => {
  it('502 with a clear message: OpenAI shape on /llm/v1, Error elsewhere (streams too)', async () => {
    const down = await startTestGateway({ env: { SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '2000' } })
    try {
      const token = await down.login(privateKeyToAccount(generatePrivateKey()))
      const client = new OpenAI({ apiKey: token, baseURL: `${down.url}/llm/v1`, maxRetries: 0 })
      const error = await client.chat.completions.create({ model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.APIError)
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502)
      expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'modelserver_unavailable', message: expect.stringMatching(/^model server at /) })
      const streamed = await fetch(`${down.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...session(token) }, body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }], stream: true }) })
      expect(streamed.status).toBe(502)
      expect(await streamed.json()).toMatchObject({ error: 'modelserver_unavailable' })
      expect(down.validationErrors).toEqual([])
    } finally {
      await down.close()
    }
  })
})

describe("the gateway's own refusals on /llm/v1, as the stock SDKs read them", () => {
  it('openai: an invalid request names its code and the field at fault; anthropic: its error type', async () => {
    const error = await openai(aliceToken).chat.completions.create({ model: 'svc-tiny-chat:latest', messages: [] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.APIError)
    const refused = error as InstanceType<typeof OpenAI.APIError>
    expect([refused.status, refused.code, refused.param, refused.type]).toEqual([400, 'invalid_request', 'messages', 'invalid_request_error'])
    expect(refused.message).toMatch(/request does not match the API description/)
    const claude = new Anthropic({ apiKey: aliceToken, baseURL: `${gw.url}/llm`, maxRetries: 0 }) // the SDK adds /v1/messages
    const anthropicError = await claude.messages.create({ model: 'svc-tiny-chat:latest', max_tokens: -1, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e)
    expect(anthropicError).toBeInstanceOf(Anthropic.BadRequestError)
    expect((anthropicError as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/max_tokens/) } })
  })

  it("keeps the 402 of a quota used up in its own body (QuotaExceeded: the limit, when it resets), not OpenAI's", async () => {
    const quotaOfOne = await startTestGateway({ modelServerUrl: ms.url, env: { SERVICE_QUOTA__COST_CALLS_PER_DAY: '1', SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000' } })
    try {
      const token = await quotaOfOne.login(privateKeyToAccount(generatePrivateKey()))
      const call = () =>
        fetch(`${quotaOfOne.url}/llm/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 }) })
      expect((await call()).status).toBe(200)
      const refused = await call()
      expect(refused.status).toBe(402)
      expect(await refused.json()).toMatchObject({ error: 'quota_exceeded', details: { limit: 1, used: 1 } })
      expect(quotaOfOne.validationErrors).toEqual([])
    } finally {
      await quotaOfOne.close()
    }
  })

  it('the rate limit answers 429 with Retry-After in the shape of the route it stopped: OpenAI, Anthropic, or the gateway’s own', async () => {
    const limited = await startTestGateway({ env: { SERVICE_RATE_LIMIT__MAX: '1' } })
    try {
      expect((await fetch(`${limited.url}/login`)).status).toBe(200) // the one counted request allowed
      const shapes = await Promise.all(
        [
          ['GET', '/llm/v1/models'],
          ['POST', '/llm/v1/messages'],
          ['GET', '/agents'],
        ].map(async ([method, path]) => {
          const res = await fetch(`${limited.url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{}' } : {}) })
          expect(res.status, path).toBe(429)
          expect(Number(res.headers.get('retry-after')), path).toBeGreaterThanOrEqual(1)
          return res.json()
        }),
      )
      expect(shapes[0]).toMatchObject({ error: { code: 'rate_limited', type: 'invalid_request_error', message: expect.stringMatching(/^too many requests/) } })
      expect(shapes[1]).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringMatching(/^too many requests/) } })
      expect(shapes[2]).toMatchObject({ error: 'rate_limited', details: { retry_after_s: expect.any(Number) } })
      expect(limited.validationErrors).toEqual([])
    } finally {
      await limited.close()
    }
  })
})

describe('documents', () => {
  it('every response matched the document', () => {
    expect(gw.validationErrors).toEqual([])
    expect(ms.mismatches).toEqual([])
  })
})
