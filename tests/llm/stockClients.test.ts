/**
 * The stock clients: `@anthropic-ai/sdk` (messages create, stream, tools, `tool_choice`),
 * `openai` `responses.create` and its stream, LangChain's `ChatAnthropic` and `ChatOpenAI` with `useResponsesApi`
 * — each against the model server directly and through the gateway's `/llm/v1` (an LLM API key: `x-api-key` for
 * the Anthropic clients, `Authorization: Bearer` for the OpenAI ones). A call whose `tool_choice` names a function
 * returns a call of that function on every surface, with the tiny (random-weight) model. Both servers validate
 * every JSON response they send against their OpenAPI documents (validation mode `error`).
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { createLlmKey } from '../support/walletLogin.js'
import { describeStockClients, MODEL, type StockClientTarget } from './stockClientCases.js'

let engine: Engine
let ms: TestModelServer
let gw: TestGateway
let apiKey: string

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({ modelServerUrl: ms.url, env: { SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '60000', SERVICE_QUOTA__COST_CALLS_PER_DAY: '1000' } })
  const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
  apiKey = await createLlmKey(gw.url, token, 'stock clients')
}, 120_000)

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
})

afterEach(() => {
  expect(ms.mismatches).toEqual([])
  expect(gw.validationErrors).toEqual([])
})

const targets: StockClientTarget[] = [
  { name: 'model server directly', anthropicBase: () => ms.url, openaiBase: () => `${ms.url}/v1` },
  { name: 'gateway /llm/v1', anthropicBase: () => `${gw.url}/llm`, openaiBase: () => `${gw.url}/llm/v1` },
]
describeStockClients(targets, () => apiKey)

describe('the gateway’s /llm/v1/messages and /llm/v1/responses: keys, quota, usage', () => {
  const post = (path: string, headers: Record<string, string>, body: unknown) =>
    fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const message = { model: MODEL, max_tokens: 4, messages: [{ role: 'user', content: 'Hi' }] }

  it('x-api-key and Authorization: Bearer both carry the key; a forged or revoked key is refused (401) and nothing is generated', async () => {
    expect((await post('/llm/v1/messages', { 'x-api-key': apiKey }, message)).status).toBe(200)
    expect((await post('/llm/v1/messages', { authorization: `Bearer ${apiKey}` }, message)).status).toBe(200)
    expect((await post('/llm/v1/responses', { 'x-api-key': apiKey }, { model: MODEL, input: 'Hi', max_output_tokens: 4 })).status).toBe(200)
    const refused: Record<string, string>[] = [{}, { 'x-api-key': `${apiKey.slice(0, -4)}AAAA` }, { 'x-api-key': 'st_forged' }]
    for (const headers of refused) {
      const res = await post('/llm/v1/messages', headers, message)
      expect(res.status).toBe(401)
      expect(await res.json()).toMatchObject({ code: 'auth_required' })
    }
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const created = (await (await post('/llm/keys', { 'x-session-token': token }, { name: 'to revoke' })).json()) as { key: string; key_id: string }
    expect((await post('/llm/v1/messages', { 'x-api-key': created.key }, message)).status).toBe(200)
    const revoked = await fetch(`${gw.url}/llm/keys/${created.key_id}`, { method: 'DELETE', headers: { 'x-session-token': token } })
    expect(revoked.status).toBe(200)
    expect((await post('/llm/v1/messages', { 'x-api-key': created.key }, message)).status).toBe(401)
  })

  it('each call counts against the quota and is in the usage ledger; past the quota: 402', async () => {
    const small = await startTestGateway({ modelServerUrl: ms.url, env: { SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '60000', SERVICE_QUOTA__COST_CALLS_PER_DAY: '2' } })
    try {
      const token = await small.login(privateKeyToAccount(generatePrivateKey()))
      const key = ((await (await fetch(`${small.url}/llm/keys`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: JSON.stringify({ name: 'q' }) })).json()) as { key: string }).key
      const call = (path: string, body: unknown) => fetch(`${small.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) })
      expect((await call('/llm/v1/messages', message)).status).toBe(200)
      expect((await call('/llm/v1/responses', { model: MODEL, input: 'Hi', max_output_tokens: 4 })).status).toBe(200)
      const over = await call('/llm/v1/messages', message)
      expect(over.status).toBe(402)
      const usage = (await (await fetch(`${small.url}/llm/usage`, { headers: { 'x-session-token': token } })).json()) as { quota: { used: number } }
      expect(usage.quota.used).toBe(2)
      expect(small.validationErrors).toEqual([])
    } finally {
      await small.close()
    }
  })

  it('a model the model server does not have: 404 in Anthropic’s shape on /llm/v1/messages', async () => {
    const res = await post('/llm/v1/messages', { 'x-api-key': apiKey }, { ...message, model: 'nope:latest' })
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } })
  })
})
