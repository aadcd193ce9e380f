/**
 * Every route that makes the model server work goes through the one meter: the cap a payment allows (summed
 * over all generations of a call), the count of the tokens generated — the model server's own, never the
 * pieces a stream was cut into — the quota and the usage ledger. Against real peers (`uptoPeers.ts`): the
 * devnet chain and facilitator, a live model server, the whole gateway; one atomic unit per token, so a
 * permit of N units pays for N tokens. Each test is an attacker's try that went through before: a streamed
 * forced tool call billed as one piece, MCP `chat` ignoring the permit's cap, agent routes uncapped and under-
 * reported, two routes that ran the model for free. "Generated" is read off the model server's own counter.
 */
import { decodePaymentResponseHeader } from '@x402/fetch'
import type { PaymentRequired } from '@x402/core/types'
import { randomBytes } from 'node:crypto'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { unlockMessageFor } from '../../src/vault/Vault.js'
import { callTool, mcpAgent, requirementOf, structured } from '../mcp/mcpAgent.js'
import { startUptoPeers, until, type UptoPeers, uptoKit } from './uptoPeers.js'

const MIN = 10n
const overlord = privateKeyToAccount(generatePrivateKey())

let peers: UptoPeers
beforeAll(async () => {
  peers = await startUptoPeers(
    { perToken: 1n, min: MIN, max: 2_000n },
    { SHADOW_OVERLORD_ADDRESS: overlord.address, SHADOW_JWT_SECRET: randomBytes(32).toString('hex') },
  )
}, 180_000)
afterAll(async () => peers?.close())

const { post, uptoPayment, uptoPayload, usageOf, walletPastQuota, expectedFor, generatedTokens } = uptoKit(() => peers)

/** The settlement a whole paid answer carries in `PAYMENT-RESPONSE`. */
const settlementOf = (res: Response) => decodePaymentResponseHeader(res.headers.get('payment-response')!) as unknown as { amount: string; scheme: string }

/**
 * A paid call with a permit for `units` (the cap it allows) from Anvil account `payer` (the devnet's payers,
 * 2…5, have approved Permit2), run while counting what the model server generates.
 */
async function paidCall(path: string, body: unknown, units: bigint, payer: number) {
  const token = await walletPastQuota()
  const payment = await uptoPayment(await post(path, token, body), payer, (r) => ({ ...r, amount: units.toString() }))
  const before = await generatedTokens()
  const res = await post(path, token, body, payment)
  const answer = await res.json()
  return { res, answer, generated: (await generatedTokens()) - before, token }
}

describe('attacker: a streamed forced tool call is billed every token the model server generated', () => {
  it('/llm/v1/chat/completions streamed without stream_options.include_usage settles the same as the same call unstreamed; the client gets no usage it did not ask for', async () => {
    const body = {
      model: 'svc-tiny-chat:latest',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } }],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      max_tokens: 300,
      temperature: 0,
      seed: 1,
    }
    const whole = await paidCall('/llm/v1/chat/completions', body, 2_000n, 2)
    expect(whole.res.status, JSON.stringify(whole.answer)).toBe(200)
    const tokens = (whole.answer as { usage: { completion_tokens: number }; choices: { message: { tool_calls?: unknown[] } }[] }).usage.completion_tokens
    expect((whole.answer as { choices: { message: { tool_calls?: unknown[] } }[] }).choices[0]!.message.tool_calls).toHaveLength(1)
    expect(BigInt(tokens)).toBeGreaterThan(MIN) // more than the minimum pays for: the amount says which count was used
    expect(settlementOf(whole.res).amount).toBe(expectedFor(tokens).toString())

    // The same call streamed (temperature 0: the same tokens), without asking for the usage.
    const token = await walletPastQuota()
    const payment = await uptoPayment(await post('/llm/v1/chat/completions', token, body), 3)
    const before = await generatedTokens()
    const streamed = await post('/llm/v1/chat/completions', token, { ...body, stream: true }, payment)
    expect(streamed.status).toBe(200)
    const text = await streamed.text()
    expect(text).toContain('get_weather')
    expect(text).not.toContain('"usage"')
    const usage = await until(() => usageOf(token), (u) => u.totals.paid_calls === 1)
    expect((await generatedTokens()) - before).toBe(tokens)
    expect(usage.totals.spend_atomic).toBe(expectedFor(tokens).toString())
    expect(peers.gw.validationErrors).toEqual([])
  })
})

describe('attacker: MCP chat stays within the cap of the payment it carries', () => {
  it('with a 20-unit permit MCP chat generates at most 20 tokens and settles what it generated', async () => {
    const token = await peers.gw.login(privateKeyToAccount(generatePrivateKey()))
    const client = await mcpAgent(peers.gw.url, { 'x-session-token': token })
    const ask = { messages: [{ role: 'user', content: 'Tell me a long story' }], options: { num_predict: 400, seed: 3 } }
    expect((await callTool(client, 'chat', ask)).isError).toBeFalsy() // the day's one quota unit
    const required = requirementOf(await callTool(client, 'chat', ask)) as PaymentRequired
    const { payload } = await uptoPayload(required, 4, (r) => ({ ...r, amount: '20' }))
    const before = await generatedTokens()
    const paid = await callTool(client, 'chat', ask, payload)
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy()
    const generated = (await generatedTokens()) - before
    expect(generated).toBeGreaterThan(0)
    expect(generated).toBeLessThanOrEqual(20)
    expect((structured(paid) as { eval_count: number }).eval_count).toBe(generated)
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ scheme: 'upto', amount: expectedFor(generated, 20n).toString() })
    await client.close()
    expect(peers.gw.validationErrors).toEqual([])
  })
})

describe('attacker: agent routes share one capped budget over all their generations and settle their real total', () => {
  it('/coordinator/tasks with a 30-unit permit: five agents generate at most 30 tokens between them, and that is what settles', async () => {
    const { res, answer, generated } = await paidCall('/coordinator/tasks', { goal: 'Write a long plan for the company, in detail' }, 30n, 4)
    expect(res.status, JSON.stringify(answer)).toBe(200)
    expect(generated).toBeGreaterThan(0)
    expect(generated).toBeLessThanOrEqual(30)
    expect((answer as { eval_count: number }).eval_count).toBe(generated)
    expect(settlementOf(res).amount).toBe(expectedFor(generated, 30n).toString())
  })

  it('/coreagent/interact with a 12-unit permit generates at most 12 tokens and settles them', async () => {
    // The route takes no seed, and the tiny model may end on its first token for a random one (seen once in a few
    // hundred runs): a call that generated nothing says nothing about the cap, so up to three paid calls are made.
    let call = await paidCall('/coreagent/interact', { agent: 'archivist', prompt: 'Tell me everything you know, at length', remember: false }, 12n, 2)
    for (let attempt = 1; attempt < 3 && call.res.status === 200 && call.generated === 0; attempt++) {
      call = await paidCall('/coreagent/interact', { agent: 'archivist', prompt: 'Tell me everything you know, at length', remember: false }, 12n, 2)
    }
    const { res, answer, generated } = call
    expect(res.status, JSON.stringify(answer)).toBe(200)
    expect(generated).toBeGreaterThan(0)
    expect(generated).toBeLessThanOrEqual(12)
    expect(settlementOf(res).amount).toBe(expectedFor(generated, 12n).toString())
  })

  it('/boardroom/convene: eight generations, one budget; the settlement is their total (its answer carries no count)', async () => {
    // the overlord unlocks the vault and provisions a cabinet of eight (bearer + signed challenges)
    const { gw } = peers
    const signed = async (scope: string, params?: Record<string, string>) => {
      const c = (await (await fetch(`${gw.url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scope, ...(params ? { params } : {}) }) })).json()) as { nonce: string; message: string }
      return { nonce: c.nonce, signature: await overlord.signMessage({ message: c.message }) }
    }
    const { jwt } = (await (await fetch(`${gw.url}/admin/shadow/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(await signed('auth')) })).json()) as { jwt: string }
    const bearer = { 'content-type': 'application/json', authorization: `Bearer ${jwt}` }
    const message = unlockMessageFor('http://gw.test')
    expect((await fetch(`${gw.url}/vault/credentials/reunlock`, { method: 'POST', headers: bearer, body: JSON.stringify({ address: overlord.address, message, signature: await overlord.signMessage({ message }) }) })).status).toBe(200)
    expect((await fetch(`${gw.url}/admin/cabinet/ACME/provision`, { method: 'POST', headers: bearer, body: JSON.stringify(await signed('cabinet.provision', { company: 'ACME' })) })).status).toBe(200)

    const { res, answer, generated, token } = await paidCall('/boardroom/convene', { company: 'ACME', motion: 'Raise the storage markup' }, 40n, 3)
    expect(res.status, JSON.stringify(answer)).toBe(200)
    expect((answer as { votes: unknown[] }).votes).toHaveLength(8)
    expect(generated).toBeGreaterThan(Number(MIN)) // more than the minimum: the amount says the total was counted
    expect(generated).toBeLessThanOrEqual(40)
    expect(settlementOf(res).amount).toBe(expectedFor(generated, 40n).toString())
    const usage = await until(() => usageOf(token), (u) => u.totals.completion_tokens >= generated)
    expect(usage.totals.completion_tokens).toBe(generated + 2) // the day's one quota call (chatBody(2)) and the boardroom's
  })
})

describe('attacker: the two routes that ran the model for free are metered', () => {
  it('/marketplace/agent/call and /marketplace/modelserver/ingest take the quota, write a usage row, and past the quota take a payment', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const token = await peers.gw.login(wallet)
    const call = await post('/marketplace/agent/call', token, { agent: 'ceo', prompt: 'Summarise the week' })
    expect(call.status).toBe(200)
    expect((await usageOf(token)).quota.used).toBe(1)
    // past the quota: the 402, then paid per token
    const body = { prompt: 'remember the treasury', model: 'svc-tiny-chat:latest', remember: true }
    const refused = await post('/marketplace/modelserver/ingest', token, body)
    expect(refused.status).toBe(402)
    const before = await generatedTokens()
    const ingest = await post('/marketplace/modelserver/ingest', token, body, await uptoPayment(refused, 2))
    expect(ingest.status).toBe(200)
    const generated = (await generatedTokens()) - before
    expect(settlementOf(ingest).amount).toBe(expectedFor(generated).toString())
    const usage = await until(() => usageOf(token), (u) => u.totals.calls === 2)
    expect(usage.totals).toMatchObject({ calls: 2, paid_calls: 1, spend_atomic: expectedFor(generated).toString() })
    const rows = await peers.gw.gateway.services.db.selectFrom('llm_usage').select(['route', 'paid_by']).where('wallet', '=', wallet.address.toLowerCase()).execute()
    expect(rows.map((r) => `${r.route}:${r.paid_by}`).sort()).toEqual(['callMarketplaceAgent:quota', 'ingestModelServerPrompt:payment'])
    expect(peers.gw.validationErrors).toEqual([])
  })
})
