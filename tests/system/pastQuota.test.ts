/**
 * Past the quota, against `npm start` (`/llm` and MCP's `chat`): its own system (one whole start)
 * with a quota of one cost call per wallet and a price per token of 7 atomic units; everything else is what
 * `npm start` wires from the devnet, `upto` included (the devnet facilitator's settlement signer as
 * `SERVICE_X402__UPTO_FACILITATOR_ADDRESS`, Permit2 and x402's `upto` proxy on local Base, the payers' Permit2
 * approval), so the 402 of a cost route offers `upto` out of the box.
 * - A stock `@x402/fetch` client paying `upto` only: the chain moves exactly the tokens produced × the price (at
 *   least the minimum) from the payer to the service, sent by the facilitator, and `GET /llm/usage` says the same;
 *   a streamed Anthropic Messages call settles after its last byte for the tokens it reported.
 * - The MCP SDK's client: `chat` past the quota returns the x402 requirement, is paid through `_meta` with the stock
 *   `@x402/core` + `@x402/evm` (exact) client, settles once, and the same payment is refused again.
 * Every test client is 127.0.0.1, one network: its daily quota is set here rather than left at 10 × the wallet's.
 */
import { toClientEvmSigner } from '@x402/evm'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { startSystem, type System } from '../browser/support/startSystem.js'
import { callTool, mcpAgent, requirementOf, structured } from '../mcp/mcpAgent.js'
import { type PayableChain, payingClient } from '../storage/harness.js'
import { walletLogin } from '../support/walletLogin.js'
import { waitFor } from '../support/waitFor.js'
import { devnetChain, publicClient, usdcBalance } from './devnetChain.js'

const PER_TOKEN = 7n
/** `npm start`'s defaults for the least and the most one `upto` call costs (src/cost/config.ts). */
const MIN = 10n
const MAX = 100_000n

let system: System
let base: PayableChain
let payTo: `0x${string}`

beforeAll(async () => {
  system = await startSystem({
    env: {
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '1',
      SERVICE_QUOTA__COST_CALLS_PER_NETWORK_PER_DAY: '50',
      SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: PER_TOKEN.toString(),
    },
  })
  base = devnetChain(system.devnet, 'eip155:8453')
  payTo = system.devnet.service.payToEvm
}, 240_000)

afterAll(async () => system?.close())

const post = (path: string, headers: Record<string, string>, body: unknown) =>
  fetch(`${system.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
const chatBody = (numPredict: number) => ({ model: 'svc-tiny-chat:latest', stream: false, messages: [{ role: 'user', content: 'Tell me a long story' }], options: { num_predict: numPredict, seed: 3 } })

/** A fresh wallet whose one quota unit is used (by a call that produced `freeTokens`): its next cost call gets the 402. */
async function walletPastQuota(): Promise<{ token: string; freeTokens: number }> {
  const token = await walletLogin(system.url, privateKeyToAccount(generatePrivateKey()))
  const free = await post('/llm/chat', { 'x-session-token': token }, chatBody(2))
  expect(free.status).toBe(200)
  return { token, freeTokens: ((await free.json()) as { eval_count: number }).eval_count }
}

type Usage = { totals: { calls: number; paid_calls: number; spend_atomic: string; completion_tokens: number }; upto: unknown }
const usageOf = async (token: string) => (await (await fetch(`${system.url}/llm/usage?days=1`, { headers: { 'x-session-token': token } })).json()) as Usage

/** What an `upto` call producing `tokens` costs: tokens × price, at least the minimum, at most the permit. */
const expectedFor = (tokens: number) => {
  const cost = BigInt(tokens) * PER_TOKEN
  return cost < MIN ? MIN : cost > MAX ? MAX : cost
}

/** `fetch` that pays 402s with x402 `upto` on local Base from Anvil account `payer` (the stock @x402/fetch wrapper). */
const uptoFetch = (payer: number) =>
  wrapFetchWithPaymentFromConfig(fetch, { schemes: [{ network: 'eip155:8453', client: new UptoEvmScheme(toClientEvmSigner(privateKeyToAccount(anvilAccount(payer).privateKey), publicClient(base))) }] })

describe('x402 upto past the quota on npm start', () => {
  it('the 402 offers upto out of the box; a stock client pays it and the chain moves exactly tokens × price, as GET /llm/usage says', async () => {
    const { token } = await walletPastQuota()
    const refused = await post('/llm/chat', { 'x-session-token': token }, chatBody(6))
    expect(refused.status).toBe(402)
    const offered = ((await refused.json()) as { accepts: { scheme: string; network: string; amount: string; extra: Record<string, unknown> }[] }).accepts
    const upto = offered.find((a) => a.scheme === 'upto' && a.network === 'eip155:8453')
    expect(upto).toMatchObject({ amount: MAX.toString(), extra: { assetTransferMethod: 'permit2', facilitatorAddress: system.devnet.facilitator.signer } })
    expect(offered.some((a) => a.scheme === 'exact')).toBe(true)

    const payer = anvilAccount(2).address
    const [payerBefore, payToBefore] = [await usdcBalance(base, payer), await usdcBalance(base, payTo)]
    const paid = await uptoFetch(2)(`${system.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: JSON.stringify(chatBody(6)) })
    const reply = (await paid.json()) as { eval_count: number }
    expect(paid.status, JSON.stringify(reply)).toBe(200)
    const expected = expectedFor(reply.eval_count)
    expect(BigInt(reply.eval_count) * PER_TOKEN).toBeGreaterThanOrEqual(MIN) // the amount is the product, not the floor
    const settlement = decodePaymentResponseHeader(paid.headers.get('payment-response')!) as unknown as { transaction: string; amount: string; scheme: string }
    expect(settlement).toMatchObject({ scheme: 'upto', amount: expected.toString(), transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect(payerBefore - (await usdcBalance(base, payer))).toBe(expected)
    expect((await usdcBalance(base, payTo)) - payToBefore).toBe(expected)
    const receipt = await publicClient(base).getTransactionReceipt({ hash: settlement.transaction as `0x${string}` })
    expect(receipt.from.toLowerCase()).toBe(system.devnet.facilitator.signer.toLowerCase())

    const usage = await usageOf(token)
    expect(usage.totals).toMatchObject({ calls: 2, paid_calls: 1, spend_atomic: expected.toString() })
    expect(usage.upto).toEqual({ price_per_token_atomic: PER_TOKEN.toString(), min_per_call_atomic: MIN.toString(), max_per_call_atomic: MAX.toString() })
  })

  it('/llm/v1/messages streamed and /llm/v1/responses whole, paid with upto, settle the output tokens they reported × price; the ledger agrees', async () => {
    const { token, freeTokens } = await walletPastQuota()
    const payToBefore = await usdcBalance(base, payTo)
    const moved = async () => (await usdcBalance(base, payTo)) - payToBefore
    const headers = { 'content-type': 'application/json', 'x-session-token': token }

    // A stream settles after its last byte (not in its headers): for message_delta's output_tokens.
    // Greedy, as the other calls here are seeded: sampled, the random-weight model can end at once with no token.
    const message = { model: 'svc-tiny-chat:latest', max_tokens: 12, temperature: 0, stream: true, messages: [{ role: 'user', content: 'Tell me a story' }] }
    const streamed = await uptoFetch(3)(`${system.url}/llm/v1/messages`, { method: 'POST', headers, body: JSON.stringify(message) })
    expect(streamed.status).toBe(200)
    const events = (await streamed.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; usage?: { output_tokens: number } })
    const streamedTokens = events.find((e) => e.type === 'message_delta')!.usage!.output_tokens
    expect(streamedTokens).toBeGreaterThan(0)
    const first = expectedFor(streamedTokens)
    await waitFor(`the settlement of ${first}`, async () => ((await moved()) === first ? true : undefined), 20_000, async () => String(await moved()))

    // A whole answer settles before it is sent: the PAYMENT-RESPONSE names the amount.
    const whole = await uptoFetch(3)(`${system.url}/llm/v1/responses`, { method: 'POST', headers, body: JSON.stringify({ model: 'svc-tiny-chat:latest', input: 'Tell me a story', max_output_tokens: 9, temperature: 0 }) })
    const response = (await whole.json()) as { usage: { output_tokens: number } }
    expect(whole.status, JSON.stringify(response)).toBe(200)
    const second = expectedFor(response.usage.output_tokens)
    expect(BigInt(response.usage.output_tokens) * PER_TOKEN).toBeGreaterThan(MIN)
    expect(decodePaymentResponseHeader(whole.headers.get('payment-response')!)).toMatchObject({ scheme: 'upto', amount: second.toString() })
    expect(await moved()).toBe(first + second)

    const usage = await waitFor('both paid calls in the ledger', async () => { const u = await usageOf(token); return u.totals.paid_calls === 2 ? u : undefined }, 20_000, () => usageOf(token))
    expect(usage.totals).toMatchObject({ calls: 3, paid_calls: 2, spend_atomic: (first + second).toString(), completion_tokens: freeTokens + streamedTokens + response.usage.output_tokens })
  })
})

describe('MCP chat past the quota on npm start', () => {
  it('within the quota it answers; past it the x402 requirement, paid through _meta and settled once; the same payment is refused again', async () => {
    const token = await walletLogin(system.url, privateKeyToAccount(generatePrivateKey()))
    const client = await mcpAgent(system.url, { 'x-session-token': token })
    const ask = { messages: [{ role: 'user', content: 'Hello' }], options: { num_predict: 6, seed: 3 } }
    const free = await callTool(client, 'chat', ask)
    expect(free.isError, JSON.stringify(free)).toBeFalsy()
    expect(free._meta?.['x402/payment-response']).toBeUndefined()

    const required = requirementOf(await callTool(client, 'chat', ask))
    expect(required.error).toBe('quota_exceeded')
    const PAYER = 4
    const payer = anvilAccount(PAYER).address
    const payload = await payingClient(base, PAYER).createPaymentPayload(required)
    const price = BigInt(payload.accepted.amount)
    expect(payload.accepted).toMatchObject({ scheme: 'exact', network: 'eip155:8453' })
    const [payerBefore, payToBefore] = [await usdcBalance(base, payer), await usdcBalance(base, payTo)]
    const paid = await callTool(client, 'chat', ask, payload)
    expect(paid.isError, JSON.stringify(paid)).toBeFalsy()
    expect((structured(paid).message as { role: string }).role).toBe('assistant')
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, network: 'eip155:8453' })
    expect(payerBefore - (await usdcBalance(base, payer))).toBe(price)
    expect((await usdcBalance(base, payTo)) - payToBefore).toBe(price)

    expect(structured(await callTool(client, 'chat', ask, payload)).error).toBe('payment_replayed')
    expect(payerBefore - (await usdcBalance(base, payer))).toBe(price)
    const usage = await waitFor('both calls in the ledger', async () => { const u = await usageOf(token); return u.totals.calls === 2 ? u : undefined }, 10_000, () => usageOf(token))
    expect(usage.totals).toMatchObject({ calls: 2, paid_calls: 1, spend_atomic: price.toString() })
    await client.close()
  })
})
