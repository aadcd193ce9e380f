import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCapturingLogger } from '../../tests/support/createCapturingLogger.js'
import { createTestDatabase, type TestDatabase } from '../../tests/support/testDatabase.js'
import { CostQuota } from '../auth/CostQuota.js'
import type { HttpResult } from '../shared/http/index.js'
import { readX402Config } from '../x402/config.js'
import { UPTO_PERMIT2_PROXY } from '../x402/EvmUptoRail.js'
import type { Facilitator } from '../x402/FacilitatorPool.js'
import { CostPayments } from './CostPayments.js'
import { LlmMetrics } from './LlmMetrics.js'
import { type CostMeterDeps, meterCostCall } from './meterCostCall.js'
import { UsageLedger } from './UsageLedger.js'
import {
  beforeUsage,
  chatCompletionsStream,
  messagesStream,
  ollamaChatStream,
  ollamaGenerateStream,
  responsesStream,
  type StreamedEvent,
} from '../../tests/support/streamedAnswers.js'

// The settlement rules of x402 `upto` cost calls, with a facilitator that records what it is asked to settle
// (the devnet chain and the real facilitator: tests/llm/uptoCostCalls.integration.test.ts).
const PAY_TO = '0x52908400098527886E0F7030069857D2E4169EE7'
const PAYER = '0xCC6Ea14Df3d24fEbEAf620cD8D6ae0e680447f93'
const FACILITATOR = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const WALLET = '0x1111111111111111111111111111111111111111'

let db: TestDatabase
let deps: CostMeterDeps
/** Amounts the facilitator was asked to settle, in order. */
let settledAmounts: string[]
const facilitator: Facilitator = {
  verify: async () => ({ isValid: true, payer: PAYER }),
  settle: async (_p, requirements) => {
    const amount = (requirements as { amount: string }).amount
    settledAmounts.push(amount)
    return { success: true, transaction: '0x' + randomBytes(32).toString('hex'), network: 'eip155:8453', payer: PAYER, amount }
  },
}

beforeAll(async () => {
  db = await createTestDatabase('sqlite')
  const x402 = readX402Config({ SERVICE_X402__PAY_TO_EVM: PAY_TO, FACILITATOR_TOKEN: 't', SERVICE_X402__UPTO_FACILITATOR_ADDRESS: FACILITATOR })
  deps = {
    quota: new CostQuota(db.db, 0),
    payments: new CostPayments({ db: db.db, x402, priceAtomic: 1_000n, tokenPricing: { perTokenMicro: 3_000_000n, minAtomic: 5n, maxAtomic: 300n }, publicOrigin: 'http://gw.test', facilitator }),
    usage: new UsageLedger(db.db, () => Math.floor(Date.now() / 1000)),
    metrics: new LlmMetrics(['svc-tiny-chat:latest']),
    logger: createCapturingLogger().logger,
    statusOf: () => 502,
    defaultModel: 'svc-tiny-chat:latest',
  }
})
afterAll(async () => db?.close())

/** A well-formed `upto` payment header for at most `amount` (the fake facilitator accepts any signature). */
function permit(amount = '300', id?: string): Record<string, string> {
  const payload = {
    ...(id ? { extensions: { 'payment-identifier': { info: { required: false, id } } } } : {}),
    x402Version: 2,
    accepted: { scheme: 'upto', network: 'eip155:8453' },
    payload: {
      signature: '0x' + '11'.repeat(65),
      permit2Authorization: {
        from: PAYER,
        spender: UPTO_PERMIT2_PROXY,
        permitted: { token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', amount },
        nonce: BigInt('0x' + randomBytes(16).toString('hex')).toString(),
        deadline: String(Math.floor(Date.now() / 1000) + 600),
        witness: { to: PAY_TO, facilitator: FACILITATOR, validAfter: '0' },
      },
    },
  }
  return { 'payment-signature': Buffer.from(JSON.stringify(payload)).toString('base64') }
}

const request = (headers: Record<string, string>) => ({ wallet: WALLET, overlord: false, headers, route: 'llmChat', method: 'POST', path: '/llm/chat', model: undefined })

async function* ndjson(count: number) {
  for (let i = 0; i < count; i++) yield `${JSON.stringify({ model: 'm', message: { content: `t${i}` }, done: false })}\n`
  yield `${JSON.stringify({ model: 'm', done: true, eval_count: count })}\n`
}

const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10))
}

describe('x402 upto cost calls', () => {
  it('a whole answer settles ⌈tokens × price⌉ before it is sent, and the run is told the token cap', async () => {
    settledAmounts = []
    let limits: unknown
    const result = (await meterCostCall(deps, request(permit()), async (_s, l) => {
      limits = l
      return { status: 200, body: { model: 'm', message: { content: 'x' }, eval_count: 7 } }
    })) as HttpResult
    expect(result.status).toBe(200)
    expect(limits).toEqual({ maxTokens: 100 })
    expect(settledAmounts).toEqual(['21'])
    const header = JSON.parse(Buffer.from(String(result.headers!['PAYMENT-RESPONSE']), 'base64').toString()) as Record<string, unknown>
    expect(header).toMatchObject({ amount: '21', scheme: 'upto' })
  })

  it('zero tokens settle the minimum; a permit below the route maximum caps both the tokens and the amount', async () => {
    settledAmounts = []
    await meterCostCall(deps, request(permit()), async () => ({ status: 200, body: { model: 'm', embeddings: [[0.1]] } }))
    let limits: unknown
    await meterCostCall(deps, request(permit('30')), async (_s, l) => {
      limits = l
      return { status: 200, body: { model: 'm', eval_count: 500 } } // a model that ignored the cap
    })
    expect(limits).toEqual({ maxTokens: 10 })
    expect(settledAmounts).toEqual(['5', '30'])
  })

  it('a stream settles after its last byte; a stream the client drops pays for the chunks it was sent', async () => {
    settledAmounts = []
    const whole = (await meterCostCall(deps, request(permit()), async () => ({ status: 200, contentType: 'application/x-ndjson', stream: ndjson(4) }))) as HttpResult
    expect(whole.headers?.['PAYMENT-RESPONSE']).toBeUndefined()
    expect(settledAmounts).toEqual([]) // nothing before the stream is read
    for await (const _ of whole.stream!) void _
    await waitFor(() => settledAmounts.length === 1)
    expect(settledAmounts).toEqual(['12'])

    const cut = (await meterCostCall(deps, request(permit()), async () => ({ status: 200, contentType: 'application/x-ndjson', stream: ndjson(50) }))) as HttpResult
    let read = 0
    for await (const _ of cut.stream!) {
      void _
      if (++read === 4) break // the client goes away after four chunks
    }
    await waitFor(() => settledAmounts.length === 2)
    expect(settledAmounts[1]).toBe('12') // 4 chunks sent, each with a token: 4 tokens × 3 (the operator is paid for all it sent)
  })

  // Each surface's stream, cut by the client before its usage event: it pays its content events × price,
  // never its framing (message_start, ping, content_block_start/stop, response.created, output_item.added,
  // the role-only chunk, the finish_reason chunk, Ollama's empty pieces, …).
  const surfaces: [string, (words: number) => StreamedEvent[], string][] = [
    ['/v1/messages', messagesStream, 'text/event-stream'],
    ['/v1/responses', responsesStream, 'text/event-stream'],
    ['/v1/chat/completions', chatCompletionsStream, 'text/event-stream'],
    ['/api/chat', ollamaChatStream, 'application/x-ndjson'],
    ['/api/generate', ollamaGenerateStream, 'application/x-ndjson'],
  ]
  for (const [surface, streamOf, contentType] of surfaces) {
    it(`${surface}: a stream the client drops before its usage pays for its content events only, not its framing`, async () => {
      const events = beforeUsage(streamOf(12))
      // dropped after the last event before the usage, and after the first content event
      for (const keep of [events.length, events.findIndex((e) => e.content) + 1]) {
        settledAmounts = []
        async function* frames() {
          for (const e of streamOf(12)) yield e.text
        }
        const cut = (await meterCostCall(deps, request(permit()), async () => ({ status: 200, contentType, stream: frames() }))) as HttpResult
        let read = 0
        for await (const _ of cut.stream!) {
          void _
          if (++read === keep) break
        }
        await waitFor(() => settledAmounts.length === 1)
        const content = events.slice(0, keep).filter((e) => e.content).length
        expect(settledAmounts, `${surface}: ${keep} events sent, ${content} of them content`).toEqual([String(Math.max(5, content * 3))])
      }
    })
  }

  it('a stream the model server ends without usage (it failed) pays for its content events only', async () => {
    settledAmounts = []
    async function* failing() {
      for (const e of beforeUsage(messagesStream(12))) yield e.text
      yield 'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"model server gone"}}\n\n'
    }
    const s = (await meterCostCall(deps, request(permit()), async () => ({ status: 200, contentType: 'text/event-stream', stream: failing() }))) as HttpResult
    for await (const _ of s.stream!) void _
    await waitFor(() => settledAmounts.length === 1)
    expect(settledAmounts).toEqual([String(16 * 3)]) // 12 words, 2 thinking deltas, 2 tool-input parts
  })

  it('a call that fails before any output settles nothing and gives the permit back; a used permit is 409', async () => {
    settledAmounts = []
    const header = permit()
    const failed = (await meterCostCall(deps, request(header), async () => ({ status: 502, body: { error: 'x', message: 'y' } }))) as HttpResult
    expect(failed.status).toBe(502)
    expect(((await meterCostCall(deps, request(header), async () => ({ status: 200, body: { eval_count: 1 } }))) as HttpResult).status).toBe(200)
    await expect(meterCostCall(deps, request(header), async () => ({ status: 200, body: { eval_count: 1 } }))).rejects.toMatchObject({ code: 'payment_replayed' })
    expect(settledAmounts).toEqual(['5'])
  })

  it('payment-identifier: a retry with a fresh permit but a used identifier is 409 and never settled', async () => {
    settledAmounts = []
    const id = 'upto_' + randomBytes(12).toString('hex')
    expect(((await meterCostCall(deps, request(permit('300', id)), async () => ({ status: 200, body: { eval_count: 2 } }))) as HttpResult).status).toBe(200)
    await expect(meterCostCall(deps, request(permit('300', id)), async () => ({ status: 200, body: { eval_count: 2 } }))).rejects.toMatchObject({ code: 'payment_replayed' })
    expect(settledAmounts).toEqual(['6'])
  })
})
