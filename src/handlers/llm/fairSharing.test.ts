import { randomBytes } from 'node:crypto'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../../../tests/support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../../../tests/support/startTestModelServer.js'
import { createEngine } from '../../modelserver/engine/createEngine.js'
import type { Engine } from '../../modelserver/engine/Engine.js'

// "One user can make everyone wait" must not hold: a session user neither unloads the shared models for
// every other caller (keep_alive 0) nor pins one for good (keep_alive -1), and new wallets on one network do not
// buy new quota.

let engine: Engine
let ms: TestModelServer
let gw: TestGateway

const CHAT = 'svc-tiny-chat:latest'
const newWallet = () => privateKeyToAccount(generatePrivateKey())

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: {
      SHADOW_JWT_SECRET: randomBytes(32).toString('hex'),
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '2',
      SERVICE_QUOTA__COST_CALLS_PER_NETWORK_PER_DAY: '5',
      SERVICE_LLM__KEEP_ALIVE_MIN_S: '120',
      SERVICE_LLM__KEEP_ALIVE_MAX_S: '600',
      SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
    },
  })
})

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
})

/** Cost calls this file got answered 200 (each took a unit of the network's quota). */
let accepted = 0
async function generate(token: string, body: Record<string, unknown>): Promise<Response> {
  const answer = await fetch(`${gw.url}/llm/generate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-token': token },
    body: JSON.stringify({ model: CHAT, prompt: 'Hi', stream: false, options: { num_predict: 1 }, ...body }),
  })
  if (answer.status === 200) accepted++
  return answer
}

/** The chat model's residency as the model server reports it (`GET /api/ps`): seconds until it unloads. */
async function chatModelExpiresInS(): Promise<number | undefined> {
  const ps = (await (await fetch(`${ms.url}/api/ps`)).json()) as { models: { name: string; expires_at: string }[] }
  const entry = ps.models.find((m) => m.name === CHAT)
  return entry ? (Date.parse(entry.expires_at) - Date.now()) / 1000 : undefined
}

describe('keep_alive of a session caller is clamped to the operator bounds', () => {
  it('keep_alive 0 does not unload the shared model: it stays for the floor', async () => {
    const token = await gw.login(newWallet())
    const answer = await generate(token, { keep_alive: 0 })
    expect(answer.status).toBe(200)
    const expiresIn = await chatModelExpiresInS()
    expect(expiresIn).toBeDefined() // still loaded for everyone else
    expect(expiresIn!).toBeGreaterThan(100)
    expect(expiresIn!).toBeLessThanOrEqual(121)
  })

  it('keep_alive -1 does not pin the shared model: it stays at most the ceiling', async () => {
    const token = await gw.login(newWallet())
    expect((await generate(token, { keep_alive: -1 })).status).toBe(200)
    const expiresIn = await chatModelExpiresInS()
    expect(expiresIn!).toBeGreaterThan(590)
    expect(expiresIn!).toBeLessThanOrEqual(601)
  })

  it('a duration that is not one is a 400 in the Error shape', async () => {
    const token = await gw.login(newWallet())
    const answer = await generate(token, { keep_alive: 'forever' })
    expect(answer.status).toBe(400)
    expect(await answer.json()).toMatchObject({ error: 'invalid_request', message: expect.stringMatching(/keep_alive/) })
  })
})

describe('the quota also counts the network: new wallets do not buy new quota', () => {
  it('past the network limit a fresh wallet is refused 402 quota_exceeded (scope network); a failed call gives its unit back', async () => {
    // Every wallet stays within its own quota of 2; together they reach the network's 5 (some spent above).
    while (accepted < 5) expect((await generate(await gw.login(newWallet()), {})).status).toBe(200)
    const fresh = await gw.login(newWallet())
    const refused = await generate(fresh, {})
    expect(refused.status).toBe(402)
    expect(await refused.json()).toMatchObject({ error: 'quota_exceeded', message: expect.stringMatching(/network \(127\.0\.0\.0\/24\)/), details: { scope: 'network', limit: 5 } })
    // The wallet's own unit taken before the network refused is given back: its quota is untouched.
    const usage = await fetch(`${gw.url}/llm/usage`, { headers: { 'x-session-token': fresh } })
    expect(usage.status).toBe(200)
    expect(((await usage.json()) as { quota: { used: number } }).quota.used).toBe(0)
    expect(gw.validationErrors).toEqual([])
  })
})
