import { request as httpRequest } from 'node:http'
/**
 * Paying per token (x402 `upto`) against real peers (`uptoPeers.ts`: Anvil with the devnet USDC, Permit2 and
 * x402's `upto` proxy, the devnet facilitator, a live model server, the whole gateway). Past the quota a stock
 * x402 client pays `upto`; the chain moves exactly the tokens the model server generated × the price (at least
 * the minimum, never above the permit), and the ledger agrees. Every check where money moves has a test that
 * tries to get past it: replays, a maximum below the minimum, a permit for another recipient, token or
 * network, a model asked for more than the permit pays.
 */
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch'
import { toClientEvmSigner } from '@x402/evm'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import type { TestGateway } from '../support/startTestGateway.js'
import { startUptoPeers, until, type UptoPeers, uptoKit } from './uptoPeers.js'

/** Atomic units per completion token, the least and the most per call (cap: 2000 tokens). */
const PER_TOKEN = 7n
const MIN = 10n
const MAX = 14_000n

let peers: UptoPeers
let gw: TestGateway
let PAY_TO: `0x${string}`

beforeAll(async () => {
  peers = await startUptoPeers({ perToken: PER_TOKEN, min: MIN, max: MAX })
  gw = peers.gw
  PAY_TO = peers.payTo
}, 180_000)

afterAll(async () => peers?.close())

const { post, chatBody, balanceOf, pub, uptoPayment, usageOf, walletPastQuota, expectedFor, generatedTokens } = uptoKit(() => peers)

/** The same signed payload with its `accepted` block rewritten (the signature does not cover it). */
function relabel(header: Record<string, string>, accepted: Record<string, unknown>): Record<string, string> {
  const decoded = JSON.parse(Buffer.from(header['PAYMENT-SIGNATURE']!, 'base64').toString()) as { accepted: Record<string, unknown> }
  decoded.accepted = { ...decoded.accepted, ...accepted }
  return { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(decoded)).toString('base64') }
}

type SseEvent = { type: string; delta?: { type?: string; text?: string; thinking?: string; partial_json?: string } }
/** The `data:` events of an SSE text received so far (a last, incomplete event is left out). */
const sseEvents = (text: string): SseEvent[] =>
  text
    .split('\n\n')
    .slice(0, -1)
    .flatMap((frame) => frame.split('\n').filter((l) => l.startsWith('data: ')))
    .map((l) => JSON.parse(l.slice(6)) as SseEvent)
/** An Anthropic event that carries generated content (text, thinking or tool input). */
const isContent = (e: SseEvent) => e.type === 'content_block_delta' && Boolean(e.delta?.text || e.delta?.thinking || e.delta?.partial_json)

/**
 * POSTs a streamed call, and when `goAway(text received)` first holds the client goes away: it half-closes its
 * connection (the gateway sees the client gone, as on a disconnect) and reads every byte the gateway still
 * wrote until it closes — so the text returned is exactly what the gateway sent, and its settlement can be
 * compared with it event for event.
 */
function hangUp(path: string, headers: Record<string, string>, body: unknown, goAway: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${gw.url}${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      expect(res.statusCode).toBe(200)
      res.setEncoding('utf8')
      let text = ''
      let gone = false
      res.on('data', (piece: string) => {
        text += piece
        if (!gone && goAway(text)) {
          gone = true
          req.socket?.end()
        }
      })
      // The answer ends unfinished (no last chunk): 'aborted' and an error, then 'close'.
      res.on('error', () => {})
      res.on('close', () => resolve(text))
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

describe('paying per token past the quota with x402 upto', () => {
  it('the 402 offers upto beside exact; stock @x402/fetch pays it and the chain moves exactly tokens × price, as the ledger says', async () => {
    const token = await walletPastQuota()
    const refused = await post('/llm/chat', token, chatBody(6))
    expect(refused.status).toBe(402)
    const body = (await refused.json()) as { accepts: { scheme: string; network: string; amount: string; payTo: string; extra: Record<string, unknown> }[] }
    expect(body.accepts.map((a) => [a.scheme, a.network, a.amount])).toEqual([
      ['exact', 'eip155:8453', '1500'],
      ['exact', 'eip155:1', '1500'],
      ['upto', 'eip155:8453', MAX.toString()],
      ['upto', 'eip155:1', MAX.toString()],
    ])
    expect(body.accepts[2]!.extra).toMatchObject({ assetTransferMethod: 'permit2', facilitatorAddress: peers.facilitator.signer })

    const payer = privateKeyToAccount(anvilAccount(2).privateKey)
    const paidFetch = wrapFetchWithPaymentFromConfig(fetch, { schemes: [{ network: 'eip155:8453', client: new UptoEvmScheme(toClientEvmSigner(payer, pub())) }] })
    const [payerBefore, payToBefore] = [await balanceOf(payer.address), await balanceOf(PAY_TO)]
    const paid = await paidFetch(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: JSON.stringify(chatBody(6)) })
    const reply = (await paid.json()) as { eval_count: number }
    expect(paid.status, JSON.stringify(reply)).toBe(200)
    const expected = expectedFor(reply.eval_count)
    const settlement = decodePaymentResponseHeader(paid.headers.get('payment-response')!) as unknown as { transaction: string; amount: string; scheme: string }
    expect(settlement).toMatchObject({ scheme: 'upto', amount: expected.toString(), transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect(payerBefore - (await balanceOf(payer.address))).toBe(expected)
    expect((await balanceOf(PAY_TO)) - payToBefore).toBe(expected)
    // the transaction is a Permit2 transfer through the proxy, sent by the facilitator
    const receipt = await pub().getTransactionReceipt({ hash: settlement.transaction as `0x${string}` })
    expect(receipt.to?.toLowerCase()).toBe('0x4020a4f3b7b90cca423b9fabcc0ce57c6c240002')
    expect(receipt.from.toLowerCase()).toBe(peers.facilitator.signer.toLowerCase())

    const usage = await usageOf(token)
    expect(usage.totals).toMatchObject({ calls: 2, paid_calls: 1, spend_atomic: expected.toString() })
    expect(usage.upto).toEqual({ price_per_token_atomic: '7', min_per_call_atomic: '10', max_per_call_atomic: '14000' })
    const row = await gw.gateway.services.db.selectFrom('llm_usage').selectAll().where('payment_id', 'is not', null).where('wallet', '=', (await gw.gateway.services.db.selectFrom('llm_usage').select('wallet').orderBy('created_at', 'desc').executeTakeFirstOrThrow()).wallet).executeTakeFirstOrThrow()
    expect([row.amount_atomic, row.completion_tokens]).toEqual([expected.toString(), reply.eval_count])
    expect(gw.validationErrors).toEqual([])
  })

  it("a stream settles after its last byte for the tokens it reported; one the client leaves is read to the model server's count and pays what was generated", async () => {
    const token = await walletPastQuota()
    const payToBefore = await balanceOf(PAY_TO)
    const whole = await post('/llm/chat', token, chatBody(12, { stream: true }), await uptoPayment(await post('/llm/chat', token, chatBody(12)), 3))
    expect(whole.status).toBe(200)
    expect(whole.headers.get('payment-response')).toBeNull() // settled after the last byte: not in the headers
    const lines = (await whole.text()).trim().split('\n').map((l) => JSON.parse(l) as { done: boolean; eval_count?: number })
    const produced = lines.at(-1)!.eval_count!
    const first = expectedFor(produced)
    await until(() => balanceOf(PAY_TO), (b) => b - payToBefore === first)
    expect((await balanceOf(PAY_TO)) - payToBefore).toBe(first)
    expect((await until(() => usageOf(token), (u) => u.totals.paid_calls === 1)).totals.spend_atomic).toBe(first.toString())

    // Asked for 1,500 tokens (the permit pays for 2,000); the client reads the first chunk and goes away. The
    // gateway reads the rest (the model server's count is in its last line) and settles what was generated.
    const controller = new AbortController()
    const long = { prompt: 'Once upon a time', stream: true, options: { temperature: 0.8, seed: 11, num_predict: 1500 } }
    const payment = await uptoPayment(await post('/llm/chat', token, chatBody(1)), 3)
    const generatedBefore = await generatedTokens()
    const cut = await post('/llm/completion', token, long, payment, controller.signal)
    expect(cut.status).toBe(200)
    await cut.body!.getReader().read()
    controller.abort()
    const usage = await until(() => usageOf(token), (u) => u.totals.paid_calls === 2, 60_000)
    const second = BigInt(usage.totals.spend_atomic) - first
    const generated = (await generatedTokens()) - generatedBefore
    expect(generated).toBeGreaterThan(0)
    expect(generated).toBeLessThanOrEqual(1500)
    expect(second).toBe(expectedFor(generated))
    expect((await until(() => balanceOf(PAY_TO), (b) => b - payToBefore === first + second)) - payToBefore).toBe(first + second)
    const row = await gw.gateway.services.db.selectFrom('llm_usage').selectAll().where('amount_atomic', '=', second.toString()).executeTakeFirstOrThrow()
    expect([row.outcome, row.completion_tokens]).toEqual(['cancelled', generated])
    expect(gw.validationErrors).toEqual([])
  })

  it("/llm/v1/messages left by the client mid-stream settles the model server's count (output_tokens), not the events the client got", async () => {
    const token = await walletPastQuota()
    const payer = privateKeyToAccount(anvilAccount(3).privateKey).address
    const [payerBefore, payToBefore] = [await balanceOf(payer), await balanceOf(PAY_TO)]
    const spentBefore = BigInt((await usageOf(token)).totals.spend_atomic)
    const body = { model: 'svc-tiny-chat:latest', max_tokens: 1500, temperature: 1, seed: 5, stream: true, messages: [{ role: 'user', content: 'Write 500 words' }] }
    const payment = await uptoPayment(await post('/llm/v1/messages', token, { ...body, stream: false }), 3)
    const generatedBefore = await generatedTokens()
    // The client goes away after its third text delta; every byte the gateway still wrote is read (see hangUp).
    const received = await hangUp('/llm/v1/messages', { 'x-session-token': token, ...payment }, body, (text) => sseEvents(text).filter(isContent).length >= 3)
    const events = sseEvents(received)
    expect(events[0]?.type).toBe('message_start')
    expect(events.map((e) => e.type)).not.toContain('message_delta') // nothing more was sent once the client left

    const usage = await until(() => usageOf(token), (u) => u.totals.paid_calls === 1, 60_000)
    const settled = BigInt(usage.totals.spend_atomic) - spentBefore
    const generated = (await generatedTokens()) - generatedBefore
    expect(generated).toBeGreaterThan(events.filter(isContent).length)
    expect(settled).toBe(expectedFor(generated))
    expect(await until(() => balanceOf(PAY_TO), (b) => b - payToBefore === settled)).toBe(payToBefore + settled)
    expect(payerBefore - (await balanceOf(payer))).toBe(settled)
    const row = await gw.gateway.services.db.selectFrom('llm_usage').selectAll().where('route', '=', 'anthropicMessages').where('amount_atomic', '=', settled.toString()).orderBy('created_at', 'desc').executeTakeFirstOrThrow()
    expect([row.outcome, row.completion_tokens]).toEqual(['cancelled', generated])
    expect(gw.validationErrors).toEqual([])
  })

  it('/llm/v1/responses: a whole response and a stream each settle exactly output_tokens × price on the chain, as the ledger says', async () => {
    const token = await walletPastQuota()
    const payToBefore = await balanceOf(PAY_TO)
    const body = (extra: Record<string, unknown> = {}) => ({ model: 'svc-tiny-chat:latest', input: 'Tell me a long story', max_output_tokens: 40, temperature: 0.8, seed: 3, ...extra })
    const ledgerRow = async (amount: bigint, streamed: 0 | 1) =>
      gw.gateway.services.db.selectFrom('llm_usage').selectAll().where('route', '=', 'openAiResponses').where('streamed', '=', streamed).where('amount_atomic', '=', amount.toString()).executeTakeFirstOrThrow()

    const whole = await post('/llm/v1/responses', token, body(), await uptoPayment(await post('/llm/v1/responses', token, body()), 4))
    const response = (await whole.json()) as { usage: { output_tokens: number } }
    expect(whole.status, JSON.stringify(response)).toBe(200)
    const produced = response.usage.output_tokens
    expect(produced).toBeGreaterThan(1) // more than the minimum pays for: the amount is the tokens', not the floor
    const first = expectedFor(produced)
    expect(first).toBe(BigInt(produced) * PER_TOKEN)
    const settlement = decodePaymentResponseHeader(whole.headers.get('payment-response')!) as unknown as { amount: string; scheme: string }
    expect(settlement).toMatchObject({ scheme: 'upto', amount: first.toString() })
    expect((await balanceOf(PAY_TO)) - payToBefore).toBe(first)
    const wholeRow = await ledgerRow(first, 0)
    expect([wholeRow.completion_tokens, wholeRow.paid_by]).toEqual([produced, 'payment'])

    // Streamed: settled after the last byte for the output_tokens of `response.completed` (or `.incomplete`).
    const streamed = await post('/llm/v1/responses', token, body({ stream: true }), await uptoPayment(await post('/llm/v1/responses', token, body()), 4))
    expect(streamed.status).toBe(200)
    expect(streamed.headers.get('payment-response')).toBeNull()
    const events = (await streamed.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; response?: { usage?: { output_tokens: number } } })
    const last = events.at(-1)!
    expect(['response.completed', 'response.incomplete']).toContain(last.type)
    const second = expectedFor(last.response!.usage!.output_tokens)
    expect((await until(() => balanceOf(PAY_TO), (b) => b - payToBefore === first + second)) - payToBefore).toBe(first + second)
    const usage = await until(() => usageOf(token), (u) => u.totals.paid_calls === 2)
    expect(usage.totals.spend_atomic).toBe((first + second).toString())
    const streamRow = await ledgerRow(second, 1)
    expect(streamRow.completion_tokens).toBe(last.response!.usage!.output_tokens)
    expect(gw.validationErrors).toEqual([])
  })

  it('/llm/v1/messages: a stream settles exactly the output_tokens of its message_delta × price', async () => {
    const token = await walletPastQuota()
    const payToBefore = await balanceOf(PAY_TO)
    const body = { model: 'svc-tiny-chat:latest', max_tokens: 40, messages: [{ role: 'user', content: 'Tell me a long story' }], stream: true, temperature: 0.8, seed: 3 }
    const res = await post('/llm/v1/messages', token, body, await uptoPayment(await post('/llm/v1/messages', token, body), 5))
    expect(res.status).toBe(200)
    const delta = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: {"type":"message_delta"'))
      .map((l) => JSON.parse(l.slice(6)) as { usage: { output_tokens: number } })[0]!
    const expected = expectedFor(delta.usage.output_tokens)
    expect(delta.usage.output_tokens).toBeGreaterThan(1)
    expect((await until(() => balanceOf(PAY_TO), (b) => b - payToBefore === expected)) - payToBefore).toBe(expected)
    const usage = await until(() => usageOf(token), (u) => u.totals.paid_calls === 1)
    expect(usage.totals.spend_atomic).toBe(expected.toString())
    const row = await gw.gateway.services.db.selectFrom('llm_usage').selectAll().where('route', '=', 'anthropicMessages').where('amount_atomic', '=', expected.toString()).executeTakeFirstOrThrow()
    expect(row.completion_tokens).toBe(delta.usage.output_tokens)
    expect(gw.validationErrors).toEqual([])
  })

  it('a permit is used once: a replay on the same or another cost route is 409 and moves nothing', async () => {
    const token = await walletPastQuota()
    const payment = await uptoPayment(await post('/llm/chat', token, chatBody(3)), 4)
    expect((await post('/llm/chat', token, chatBody(3), payment)).status).toBe(200)
    const payToAfter = await balanceOf(PAY_TO)
    const firstSpend = BigInt((await usageOf(token)).totals.spend_atomic)
    const again = await post('/llm/chat', token, chatBody(3), payment)
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ error: 'payment_replayed' })
    const elsewhere = await post('/llm/generate', token, { prompt: 'hi', stream: false, options: { num_predict: 3 } }, payment)
    expect(elsewhere.status).toBe(409)
    // Concurrent replays of a fresh permit: one call runs.
    const fresh = await uptoPayment(await post('/llm/chat', token, chatBody(3)), 4)
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => post('/llm/chat', token, chatBody(3), fresh)))).map((r) => r.status).sort()
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409])
    const usage = await usageOf(token)
    expect(usage.totals.paid_calls).toBe(2)
    // the chain moved one more settlement, the one the ledger recorded for the call that ran
    expect((await balanceOf(PAY_TO)) - payToAfter).toBe(BigInt(usage.totals.spend_atomic) - firstSpend)
    expect(gw.validationErrors).toEqual([])
  })

  it('a permit whose maximum is below the minimum is refused before any generation', async () => {
    const token = await walletPastQuota()
    const payment = await uptoPayment(await post('/llm/chat', token, chatBody(3)), 4, (r) => ({ ...r, amount: (MIN - 1n).toString() }))
    const before = await usageOf(token)
    const refused = await post('/llm/chat', token, chatBody(3), payment)
    expect(refused.status).toBe(402)
    expect(await refused.json()).toMatchObject({ error: 'insufficient_amount', message: expect.stringMatching(/below the least a call costs/) })
    expect((await usageOf(token)).totals.calls).toBe(before.totals.calls) // no call ran
    expect(gw.validationErrors).toEqual([])
  })

  it('a permit for another recipient, token or network is refused and moves nothing', async () => {
    const token = await walletPastQuota()
    const payToBefore = await balanceOf(PAY_TO)
    const attacker = anvilAccount(9).address
    const other = '0x1111111111111111111111111111111111111111'
    const cases: [string, RegExp, Record<string, string>][] = [
      ['wrong_receiver', /payTo must be/, await uptoPayment(await post('/llm/chat', token, chatBody(3)), 5, (r) => ({ ...r, payTo: attacker }))],
      // the permit pays the attacker while `accepted` names the service
      ['wrong_receiver', /witness.to must be/, relabel(await uptoPayment(await post('/llm/chat', token, chatBody(3)), 5, (r) => ({ ...r, payTo: attacker })), { payTo: PAY_TO })],
      ['wrong_asset', /permitted token must be/, await uptoPayment(await post('/llm/chat', token, chatBody(3)), 5, (r) => ({ ...r, asset: other }), other)],
      // a permit another facilitator may settle: the gateway's could not, the other could take it at any amount
      ['invalid_payment', /witness.facilitator must be/, await uptoPayment(await post('/llm/chat', token, chatBody(3)), 5, (r) => ({ ...r, extra: { ...r.extra, facilitatorAddress: attacker } }))],
    ]
    for (const [code, message, payment] of cases) {
      const res = await post('/llm/chat', token, chatBody(3), payment)
      expect(res.status, code).toBe(402)
      expect(await res.json(), code).toMatchObject({ error: code, message: expect.stringMatching(message) })
    }
    // Signed for Ethereum (chain 1), presented as a Base payment: the signature binds chain 1, Base refuses it.
    const forEthereum = await uptoPayment(await post('/llm/chat', token, chatBody(3)), 5, (r) => ({ ...r, network: 'eip155:1' }))
    const relabelled = await post('/llm/chat', token, chatBody(3), relabel(forEthereum, { network: 'eip155:8453' }))
    expect(relabelled.status).toBe(402)
    expect(((await relabelled.json()) as { message: string }).message).toMatch(/signature/)
    expect(await balanceOf(PAY_TO)).toBe(payToBefore)
    expect((await usageOf(token)).totals.paid_calls).toBe(0)
    expect(gw.validationErrors).toEqual([])
  })

  it('a model asked for more than the permit pays for is stopped at it: the amount never exceeds the permit', async () => {
    const token = await walletPastQuota()
    const cap = 5n * PER_TOKEN // a permit for 5 tokens
    const payToBefore = await balanceOf(PAY_TO)
    const payment = await uptoPayment(await post('/llm/chat', token, chatBody(3)), 5, (r) => ({ ...r, amount: cap.toString() }))
    const res = await post('/llm/chat', token, chatBody(400), payment)
    const reply = (await res.json()) as { eval_count: number }
    expect(res.status).toBe(200)
    expect(reply.eval_count).toBeLessThanOrEqual(5)
    const moved = (await balanceOf(PAY_TO)) - payToBefore
    expect(moved).toBe(expectedFor(reply.eval_count, cap))
    expect(moved).toBeLessThanOrEqual(cap)
    // The same over OpenAI's surface: max_tokens is capped too.
    const payment2 = await uptoPayment(await post('/llm/chat', token, chatBody(3)), 5, (r) => ({ ...r, amount: cap.toString() }))
    const oa = await post('/llm/v1/chat/completions', token, { model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'Tell me a long story' }], max_tokens: 400, seed: 3 }, payment2)
    const completion = (await oa.json()) as { usage: { completion_tokens: number } }
    expect(oa.status, JSON.stringify(completion)).toBe(200)
    expect(completion.usage.completion_tokens).toBeLessThanOrEqual(5)
    expect((await balanceOf(PAY_TO)) - payToBefore - moved).toBe(expectedFor(completion.usage.completion_tokens, cap))
    expect(gw.validationErrors).toEqual([])
  })
})
