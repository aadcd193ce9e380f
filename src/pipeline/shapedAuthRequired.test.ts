/**
 * The 401 of the OpenAI- and Anthropic-compatible routes, as their stock SDKs show it: the gate's answer in the
 * family's error shape, saying how to get a token — with no credential, with one that is not valid, on each route
 * of `/llm/v1`. Every answer is checked against the document (the gateway runs with response validation `error`).
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../../tests/support/startTestGateway.js'

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway()
}, 60_000)
afterAll(async () => gw?.close())

const HOW = /Send Authorization: Bearer <token> with an API key \(sk-p2s-…; signed in, create one with POST \/llm\/keys\) or the session token \(st_…\) of a wallet sign-in: at \/login in a browser, or npx pay2store login\./

describe('401 on /llm/v1', () => {
  it('the openai SDK shows how to get a token, when none was sent and when the one sent is not valid', async () => {
    for (const [apiKey, problem, code] of [
      ['', /^401 No API key\. /, 'missing_api_key'],
      ['sk-p2s-not-a-key', /^401 This API key or session token is not valid \(unknown, revoked or expired\)\. /, 'invalid_api_key'],
    ] as const) {
      const client = new OpenAI({ apiKey: apiKey || 'unused', baseURL: `${gw.url}/llm/v1`, maxRetries: 0, ...(apiKey ? {} : { defaultHeaders: { authorization: null } }) })
      const error = await client.chat.completions.create({ model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError)
      const e = error as InstanceType<typeof OpenAI.AuthenticationError>
      expect(e.message).toMatch(problem)
      expect(e.message).toMatch(HOW)
      expect(e.code).toBe(code)
    }
    expect(gw.validationErrors).toEqual([])
  })

  it('every OpenAI-compatible route answers so, with the gate\'s code and path kept', async () => {
    for (const [method, path] of [
      ['POST', '/llm/v1/chat/completions'],
      ['POST', '/llm/v1/completions'],
      ['POST', '/llm/v1/embeddings'],
      ['POST', '/llm/v1/responses'],
      ['GET', '/llm/v1/models'],
    ]) {
      const res = await fetch(`${gw.url}${path}`, { method, headers: { 'content-type': 'application/json', accept: 'application/json' }, body: method === 'POST' ? '{}' : undefined })
      expect(res.status, path).toBe(401)
      const body = (await res.json()) as { code: string; from: string; error: { message: string; type: string } }
      expect(body, path).toMatchObject({ code: 'auth_required', from: path, error: { type: 'invalid_request_error', param: null, code: 'missing_api_key' } })
      expect(body.error.message, path).toMatch(HOW)
    }
    expect(gw.validationErrors).toEqual([])
  })

  it("the Anthropic SDK shows it on /llm/v1/messages, in Anthropic's shape", async () => {
    const client = new Anthropic({ apiKey: 'sk-p2s-not-a-key', baseURL: `${gw.url}/llm`, maxRetries: 0 }) // the SDK adds /v1/messages
    const error = await client.messages.create({ model: 'svc-tiny-chat:latest', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError)
    expect((error as Error).message).toMatch(/This API key or session token is not valid.* Send x-api-key: <token> \(or Authorization: Bearer <token>\) with an API key .*POST \/llm\/keys/)
    expect(gw.validationErrors).toEqual([])
  })

  it('a session route keeps the gate\'s own answer', async () => {
    const res = await fetch(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ code: 'auth_required', from: '/llm/chat' })
  })
})
