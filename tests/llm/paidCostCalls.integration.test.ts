import { randomBytes } from 'node:crypto'
/**
 * Paid cost calls and their metering against real peers: a local Base chain (Anvil, the devnet USDC at the canonical
 * address), the devnet x402 facilitator, a live model server and the whole gateway. Past the daily quota the
 * stock @x402/fetch client pays a cost call; one payload never buys two calls, however many retries race; a
 * call that fails before output settles nothing; every call lands in the usage ledger and the metrics.
 */
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX } from '../../devnet/accounts.js'
import { type LocalChain, startChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { type FacilitatorPeer, startFacilitator } from '../../devnet/facilitator/startFacilitator.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { payingClient } from '../storage/harness.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { waitFor } from '../support/waitFor.js'

const TOKEN = randomBytes(32).toString('hex')
const PAY_TO = anvilAccount(7).address
const PRICE = 1_500n

let chain: LocalChain
let facilitator: FacilitatorPeer
let engine: Engine
let ms: TestModelServer
let gw: TestGateway

const x402Env = (): Record<string, string> => ({
  SERVICE_X402__FACILITATOR_URL: facilitator.url,
  FACILITATOR_TOKEN: TOKEN,
  SERVICE_X402__PAY_TO_EVM: PAY_TO,
  SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: PRICE.toString(),
})

beforeAll(async () => {
  chain = await startChain({ chainId: 8453 })
  facilitator = await startFacilitator({ token: TOKEN, chains: [{ chainId: 8453, rpcUrl: chain.url }], signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey })
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: { ...x402Env(), SERVICE_QUOTA__COST_CALLS_PER_DAY: '1', SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000' },
  })
}, 120_000)

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
  await facilitator?.close()
  await chain?.close()
})

const balanceOf = (who: `0x${string}`) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({
    address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who],
  }) as Promise<bigint>

const chatBody = (extra: Record<string, unknown> = {}) => JSON.stringify({ messages: [{ role: 'user', content: 'Hello' }], options: { num_predict: 6, seed: 3 }, ...extra })
const chat = (url: string, token: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  fetch(`${url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token, ...headers }, body: chatBody(extra) })

/** A stock x402 client's payment header for the 402 `res` (payer: Anvil account `payer`). */
async function paymentFor(res: Response, payer: number): Promise<Record<string, string>> {
  const client = payingClient(chain, payer)
  const required = client.getPaymentRequiredResponse((n) => res.headers.get(n), await res.json())
  return client.encodePaymentSignatureHeader(await client.createPaymentPayload(required))
}

type Usage = {
  wallet: string
  days: { day: string; calls: number; paid_calls: number; errors: number; spend_atomic: string; completion_tokens: number }[]
  totals: { calls: number; paid_calls: number; errors: number; spend_atomic: string; completion_tokens: number }
  quota: { limit: number; used: number }
  price_per_call_atomic: string | null
}

/**
 * `GET /llm/usage` once `calls` calls are recorded: a call's record is written just after its answer (a client
 * holding the answer may ask before it is in: CI, 2026-11-27, 30 concurrent calls on PostgreSQL). Bounded: a record
 * that never comes fails naming the totals it then shows.
 */
const usageOf = async (url: string, token: string, calls: number): Promise<Usage> => {
  const read = async () => {
    const res = await fetch(`${url}/llm/usage?days=7`, { headers: { 'x-session-token': token } })
    expect(res.status).toBe(200)
    return (await res.json()) as Usage
  }
  return waitFor(`${calls} recorded calls`, async () => {
    const usage = await read()
    return usage.totals.calls >= calls ? usage : undefined
  }, 10_000, async () => (await read()).totals)
}

describe('a cost call past the quota on an OpenAI-compatible route', () => {
  it("keeps x402's 402 body (what a paying client reads), while the route's other refusals take OpenAI's shape", async () => {
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const openAiChat = (body: unknown) =>
      fetch(`${gw.url}/llm/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) })
    const call = { model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4 }
    expect((await openAiChat(call)).status).toBe(200)
    const refused = await openAiChat(call)
    expect(refused.status).toBe(402)
    const body = (await refused.json()) as { x402Version: number; error: string; accepts: unknown[] }
    expect(body).toMatchObject({ x402Version: 2, error: 'quota_exceeded' })
    expect(body.accepts.length).toBeGreaterThan(0)
    expect(JSON.parse(Buffer.from(refused.headers.get('payment-required')!, 'base64').toString())).toEqual(body)
    const invalid = await openAiChat({ ...call, messages: [] })
    expect(invalid.status).toBe(400)
    expect(await invalid.json()).toMatchObject({ error: { code: 'invalid_request', type: 'invalid_request_error' } })
    expect(gw.validationErrors).toEqual([])
  })
})

describe('a cost call past the quota, paid with x402', () => {
  it('with a quota of 1 the second call gets 402; stock @x402/fetch pays it (whole and streamed) and gets 200', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey())
    const token = await gw.login(wallet)
    expect((await chat(gw.url, token)).status).toBe(200)

    const refused = await chat(gw.url, token)
    expect(refused.status).toBe(402)
    const body = (await refused.json()) as { x402Version: number; error: string; accepts: { network: string; amount: string; payTo: string }[]; details: { limit: number; used: number } }
    expect(body).toMatchObject({ x402Version: 2, error: 'quota_exceeded', details: { limit: 1, used: 1 } })
    expect(body.accepts.map((a) => [a.network, a.amount, a.payTo])).toEqual([
      ['eip155:8453', '1500', PAY_TO],
      ['eip155:1', '1500', PAY_TO],
    ])
    expect(JSON.parse(Buffer.from(refused.headers.get('payment-required')!, 'base64').toString())).toEqual(body)

    const payer = privateKeyToAccount(anvilAccount(4).privateKey)
    const paidFetch = wrapFetchWithPaymentFromConfig(fetch, { schemes: [{ network: 'eip155:8453', client: new ExactEvmScheme(toClientEvmSigner(payer)) }] })
    const [payerBefore, payToBefore] = [await balanceOf(payer.address), await balanceOf(PAY_TO)]
    const paid = await paidFetch(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: chatBody() })
    const reply = (await paid.json()) as { message: { role: string }; eval_count: number }
    expect(paid.status, JSON.stringify(reply)).toBe(200)
    expect(reply.message.role).toBe('assistant')
    const settlement = decodePaymentResponseHeader(paid.headers.get('payment-response')!) as unknown as { success: boolean; transaction: string; payment_id: string; payer: string }
    expect(settlement).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/), payment_id: expect.stringMatching(/^pay_/) })
    expect(payerBefore - (await balanceOf(payer.address))).toBe(PRICE)
    expect((await balanceOf(PAY_TO)) - payToBefore).toBe(PRICE)

    // A stream settles once the model produced its first chunk; the settlement is in the headers.
    const streamed = await paidFetch(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: chatBody({ stream: true }) })
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    expect(decodePaymentResponseHeader(streamed.headers.get('payment-response')!)).toMatchObject({ success: true })
    const lines = (await streamed.text()).trim().split('\n').map((l) => JSON.parse(l) as { done: boolean; eval_count?: number })
    expect(lines.at(-1)!.done).toBe(true)
    expect((await balanceOf(PAY_TO)) - payToBefore).toBe(2n * PRICE)

    // The usage ledger: three calls, two paid, the spend; the catalogue: two llm.call.paid events.
    const usage = await usageOf(gw.url, token, 3)
    expect(usage).toMatchObject({ wallet: wallet.address.toLowerCase(), quota: { limit: 1, used: 1 }, price_per_call_atomic: '1500' })
    expect(usage.totals).toMatchObject({ calls: 3, paid_calls: 2, errors: 0, spend_atomic: '3000' })
    expect(usage.totals.completion_tokens).toBeGreaterThan(0)
    expect(usage.days).toHaveLength(1)
    // Like every session GET, the usage also takes the browser's session cookie.
    const viaCookie = await fetch(`${gw.url}/llm/usage`, { headers: { cookie: `svc_session=${token}` } })
    expect(viaCookie.status).toBe(200)
    expect(((await viaCookie.json()) as { totals: unknown }).totals).toEqual(usage.totals)
    const events = (await (await fetch(`${gw.url}/insight/catalogue/recent?kind=llm.call.paid&h=true`, { headers: { 'x-session-token': token } })).json()) as { events: { payload: Record<string, unknown>; summary: string }[] }
    const mine = events.events.filter((e) => e.payload.wallet === wallet.address.toLowerCase())
    expect(mine).toHaveLength(2)
    expect(mine[0]!.payload).toMatchObject({ route: 'llmChat', network: 'eip155:8453', amount_atomic: '1500', payer: payer.address.toLowerCase() })
    expect(mine[0]!.summary).toBe(`Wallet ${wallet.address.toLowerCase()} paid 1500 atomic units on eip155:8453 for llmChat (${String(mine[0]!.payload.tx_hash)})`)

    // /metrics: time to first token and tokens/s of the chat model (the streamed call).
    const metrics = await (await fetch(`${gw.url}/metrics`)).text()
    expect(metrics).toMatch(/llm_time_to_first_token_seconds_count\{model="svc-tiny-chat:latest"\} [1-9]/)
    expect(metrics).toMatch(/llm_tokens_per_second_count\{model="svc-tiny-chat:latest"\} [1-9]/)
    expect(metrics).toMatch(/llm_cost_calls_total\{paid_by="payment",outcome="ok"\} 2/)
    expect(gw.validationErrors).toEqual([])
  })

  it('30 concurrent retries with one payment payload run exactly one call and settle once', async () => {
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    await chat(gw.url, token) // the day's one call
    const payment = await paymentFor(await chat(gw.url, token), 5)
    const payer = anvilAccount(5).address
    const [payerBefore, payToBefore] = [await balanceOf(payer), await balanceOf(PAY_TO)]
    const answers = await Promise.all(Array.from({ length: 30 }, () => chat(gw.url, token, payment)))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses.filter((s) => s === 200)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(29)
    for (const a of answers.filter((x) => x.status === 409)) expect(await a.json()).toEqual({ error: 'payment_replayed', message: 'this payment was already used: one payment buys one upload or one call' })
    // The chain: one transfer of the price. The database: one settled claim. The ledger: one paid call.
    expect(payerBefore - (await balanceOf(payer))).toBe(PRICE)
    expect((await balanceOf(PAY_TO)) - payToBefore).toBe(PRICE)
    const rows = await gw.gateway.services.db.selectFrom('cost_payments').selectAll().where('payer', '=', payer.toLowerCase()).execute()
    expect(rows.map((r) => r.status)).toEqual(['settled'])
    expect((await usageOf(gw.url, token, 2)).totals).toMatchObject({ calls: 2, paid_calls: 1, spend_atomic: '1500' })
    // Replayed later, still refused.
    expect((await chat(gw.url, token, payment)).status).toBe(409)
    expect(gw.validationErrors).toEqual([])
  })

  it('a malformed or insufficient payment is a 4xx in the document’s shape, nothing settled', async () => {
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    await chat(gw.url, token)
    const payToBefore = await balanceOf(PAY_TO)

    const garbage = await chat(gw.url, token, { 'payment-signature': 'not base64!' })
    expect(garbage.status).toBe(400)
    expect(await garbage.json()).toEqual({ error: 'invalid_payment_header', message: 'malformed payment header: PAYMENT-SIGNATURE is not base64' })

    const good = await paymentFor(await chat(gw.url, token), 3)
    const decoded = JSON.parse(Buffer.from(good['PAYMENT-SIGNATURE']!, 'base64').toString()) as { accepted: { network: string }; payload: { authorization: { value: string } } }
    const encode = (v: unknown) => ({ 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(v)).toString('base64') })

    const otherNetwork = await chat(gw.url, token, encode({ ...decoded, accepted: { ...decoded.accepted, network: 'eip155:137' } }))
    expect(otherNetwork.status).toBe(400)
    expect(await otherNetwork.json()).toMatchObject({ error: 'unsupported_network' })

    const cheap = structuredClone(decoded)
    cheap.payload.authorization.value = '1'
    const underpaid = await chat(gw.url, token, encode(cheap))
    expect(underpaid.status).toBe(402)
    const refusal = (await underpaid.json()) as { error: string; accepts: unknown[] }
    expect(refusal.error).toBe('insufficient_amount')
    expect(refusal.accepts).toHaveLength(2)
    expect(underpaid.headers.get('payment-required')).toBeTruthy()
    expect(await balanceOf(PAY_TO)).toBe(payToBefore)
    expect(gw.validationErrors).toEqual([])
  })
})

describe('two gateway instances on one PostgreSQL database', () => {
  it('30 retries of one payload, split over both instances, run one call and settle once', async () => {
    const env = { ...x402Env(), SERVICE_QUOTA__COST_CALLS_PER_DAY: '0', SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000' }
    const one = await startTestGateway({ dialect: 'postgres', modelServerUrl: ms.url, env })
    const two = await startTestGateway({ databaseUrl: one.databaseUrl, modelServerUrl: ms.url, env })
    try {
      const token = await one.login(privateKeyToAccount(generatePrivateKey()))
      const payment = await paymentFor(await chat(two.url, token), 3)
      const payer = anvilAccount(3).address
      const before = await balanceOf(payer)
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(i % 2 ? one.url : two.url, token, payment)))
      const statuses = answers.map((a) => a.status)
      expect(statuses.filter((x) => x === 200)).toHaveLength(1)
      expect(statuses.filter((x) => x === 409)).toHaveLength(29)
      expect(before - (await balanceOf(payer))).toBe(PRICE)
      const rows = await one.gateway.services.db.selectFrom('cost_payments').select(['status', 'tx_hash']).execute()
      expect(rows).toEqual([{ status: 'settled', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) }])
      expect((await usageOf(two.url, token, 1)).totals).toMatchObject({ calls: 1, paid_calls: 1, spend_atomic: '1500' })
      expect([...one.validationErrors, ...two.validationErrors]).toEqual([])
    } finally {
      await two.close()
      await one.close()
    }
  })
})

describe('model server down', () => {
  it('a paid call answers 502 and settles nothing; the payload stays usable', async () => {
    const down = await startTestGateway({ env: { ...x402Env(), SERVICE_QUOTA__COST_CALLS_PER_DAY: '0' } })
    try {
      const token = await down.login(privateKeyToAccount(generatePrivateKey()))
      const payer = privateKeyToAccount(anvilAccount(2).privateKey)
      const before = await balanceOf(payer.address)
      const paidFetch = wrapFetchWithPaymentFromConfig(fetch, { schemes: [{ network: 'eip155:8453', client: new ExactEvmScheme(toClientEvmSigner(payer)) }] })
      for (const stream of [false, true]) {
        const res = await paidFetch(`${down.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: chatBody({ stream }) })
        expect(res.status).toBe(502)
        expect(await res.json()).toMatchObject({ error: 'modelserver_unavailable', message: expect.stringMatching(/^model server at /) })
        expect(res.headers.get('payment-response')).toBeNull()
      }
      // The claim was released: the same payload is not "replayed", it meets the same outage again.
      const payment = await paymentFor(await chat(down.url, token), 2)
      expect((await chat(down.url, token, payment)).status).toBe(502)
      expect((await chat(down.url, token, payment)).status).toBe(502)
      expect(await balanceOf(payer.address)).toBe(before)
      expect(await down.gateway.services.db.selectFrom('cost_payments').selectAll().execute()).toEqual([])
      const usage = await usageOf(down.url, token, 4)
      expect(usage.totals).toMatchObject({ calls: 4, paid_calls: 0, errors: 4, spend_atomic: '0' })
      expect(down.validationErrors).toEqual([])
    } finally {
      await down.close()
    }
  })
})

describe('documents', () => {
  it('the model server matched its document', () => {
    expect(ms.mismatches).toEqual([])
  })
})
