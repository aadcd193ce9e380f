import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../tests/support/startTestGateway.js'

/** The gateway's storage paths over HTTP on PostgreSQL (the domain tests cover both dialects in depth). */
describe('gateway on PostgreSQL', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ dialect: 'postgres', env: { SERVICE_QUOTA__COST_CALLS_PER_DAY: '0' } })
  })
  afterAll(async () => {
    await gw?.close()
  })

  it('logs in, gates, records the redirect, refuses a replay and enforces the quota', async () => {
    expect(gw.gateway.services.dialect).toBe('postgres')
    const account = privateKeyToAccount(generatePrivateKey())
    const c = await fetch(`${gw.url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: account.address }) })
    const { challenge } = (await c.json()) as { challenge: string }
    const signature = await account.signMessage({ message: challenge })
    const register = () =>
      fetch(`${gw.url}/users/register-with-signature`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: account.address, challenge, signature }) })
    const results = await Promise.all([register(), register(), register()])
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401])
    const token = ((await results.find((r) => r.status === 200)!.json()) as { session_token: string }).session_token
    expect((await fetch(`${gw.url}/journal`, { headers: { accept: 'text/html' }, redirect: 'manual' })).status).toBe(302)
    expect((await fetch(`${gw.url}/journal`, { headers: { 'x-session-token': token } })).status).toBe(200)
    const events = (await (await fetch(`${gw.url}/insight/catalogue/recent?kind=auth.gate.redirect`, { headers: { 'x-session-token': token } })).json()) as { events: { payload: { path: string } }[] }
    expect(events.events[0]!.payload.path).toBe('/journal')
    const cost = await fetch(`${gw.url}/llm/completion`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: JSON.stringify({ prompt: 'x' }) })
    expect(cost.status).toBe(402)
    expect(gw.validationErrors).toEqual([])
  })
})
