import { randomBytes } from 'node:crypto'
import { answered } from '../../../tests/support/answered.js'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { ollamaChatFrames, ollamaGenerateFrames, type ScriptedAnswer, type ScriptedModelServer, startScriptedModelServer } from '../../../tests/support/scriptedModelServer.js'
import { chatCompletionsStream, messagesStream, ollamaChatStream, ollamaGenerateStream, responsesStream, type StreamedEvent } from '../../../tests/support/streamedAnswers.js'
import { createTestDatabase, type TestDatabase } from '../../../tests/support/testDatabase.js'
import { UPTO_TEST, uptoPermitHeader } from '../../../tests/support/uptoPermitHeader.js'
import { testMeter } from '../../../tests/support/testMeter.js'
import type { HttpResult } from '../../shared/http/index.js'
import { readX402Config } from '../../x402/config.js'
import type { Facilitator } from '../../x402/FacilitatorPool.js'
import { CostPayments } from '../CostPayments.js'
import { GenerationBudgetSpentError } from './errors.js'
import { Meter, type MeteredCallRequest, type MeteredRun } from './Meter.js'
import type { MeteredModelServer, OpenAiPath } from './MeteredModelServer.js'

// The rules of x402 `upto` calls (pay per token) in the meter, with a facilitator that records what it is asked
// to settle and a scripted model server over real HTTP (the devnet chain, the real facilitator and the real
// model server: tests/llm/uptoCostCalls.integration.test.ts). Price 3 per token, minimum 5, at most 300 (100
// tokens) per call.
const { payTo: PAY_TO, payer: PAYER, facilitator: FACILITATOR } = UPTO_TEST
const WALLET = '0x1111111111111111111111111111111111111111'

let db: TestDatabase
let meter: Meter
let ms: ScriptedModelServer
/** What the scripted model server answers next (by path). */
let answer: (path: string, body: Record<string, unknown>) => ScriptedAnswer
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
  ms = await startScriptedModelServer((path, body) => answer(path, body))
  meter = testMeter({ db: db.db, modelServerUrl: ms.url, payments: new CostPayments(paymentOptions()) })
})
afterAll(async () => {
  await ms?.close()
  await db?.close()
})
beforeEach(() => {
  settledAmounts = []
  ms.requests.length = 0
  ms.cut.length = 0
})

/** A well-formed `upto` payment header for at most `amount` (the fake facilitator accepts any signature). */
const permit = (amount = '300', id?: string): Record<string, string> => uptoPermitHeader({ amount, paymentIdentifier: id }).headers

/** The payments of these tests: price 3 per token, minimum 5, at most 300 per call (`perTokenMicro` as given). */
const paymentOptions = (perTokenMicro = 3_000_000n) => ({
  db: db.db,
  x402: readX402Config({ SERVICE_X402__PAY_TO_EVM: PAY_TO, FACILITATOR_TOKEN: 't', SERVICE_X402__UPTO_FACILITATOR_ADDRESS: FACILITATOR }),
  priceAtomic: 1_000n,
  tokenPricing: { perTokenMicro, minAtomic: 5n, maxAtomic: 300n },
  publicOrigin: 'http://gw.test',
  facilitator,
})

const request = (headers: Record<string, string>): MeteredCallRequest => ({ wallet: WALLET, overlord: false, headers, route: 'llmChat', method: 'POST', path: '/llm/chat', model: undefined, statusOf: () => 502 })
const call = (headers: Record<string, string>, run: MeteredRun) => answered(meter.call(request(headers), run))
const chat = (server: MeteredModelServer, numPredict?: number) => server.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...(numPredict ? { options: { num_predict: numPredict } } : {}) })
const sent = (path: string) => ms.requests.filter((r) => r.path === path).map((r) => r.body)

const waitFor = async (check: () => boolean) => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10))
}

/** A run that proxies one OpenAI- or Anthropic-compatible call and passes its bytes on. */
const proxied =
  (path: OpenAiPath, body: Record<string, unknown>): MeteredRun =>
  async (server) => {
    const upstream = await server.openAi(path, body)
    return { status: upstream.status, contentType: upstream.contentType, stream: upstream.bytes }
  }

async function readAll(result: HttpResult): Promise<string> {
  let text = ''
  for await (const chunk of result.stream!) text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
  return text
}

describe('x402 upto: what the meter settles', () => {
  it("a whole answer settles ⌈tokens × price⌉ before it is sent — the model server's count — its request capped at what the permit pays for", async () => {
    answer = () => ({ frames: ollamaChatFrames(7) })
    const result = (await call(permit(), async (server) => ({ status: 200, body: await chat(server) }))) as HttpResult
    expect(result.status).toBe(200)
    expect(sent('/api/chat')[0]).toMatchObject({ options: { num_predict: 100 } })
    expect(settledAmounts).toEqual(['21'])
    const header = JSON.parse(Buffer.from(String(result.headers!['PAYMENT-RESPONSE']), 'base64').toString()) as Record<string, unknown>
    expect(header).toMatchObject({ amount: '21', scheme: 'upto' })
  })

  it('zero tokens settle the minimum; a permit below the route maximum caps both the tokens and the amount (a model that ignores the cap)', async () => {
    answer = (path) => (path === '/api/embed' ? { json: { model: 'e', embeddings: [[0.1]] } } : { frames: ollamaChatFrames(3, 500) })
    await call(permit(), async (server) => ({ status: 200, body: { v: await server.embed({ model: 'e', input: 'x' }) } }))
    await call(permit('30'), async (server) => ({ status: 200, body: await chat(server) }))
    expect(sent('/api/chat')[0]).toMatchObject({ options: { num_predict: 10 } })
    expect(settledAmounts).toEqual(['5', '30'])
  })

  it('one budget for every generation of a call: shared evenly, stopped once spent, billed their real total', async () => {
    // the scripted model server generates exactly what it is allowed
    answer = (_path, body) => {
      const n = (body.options as { num_predict: number }).num_predict
      return { frames: ollamaGenerateFrames(Math.min(n, 3), n) }
    }
    let refused: unknown
    const result = (await call(permit('100'), async (server) => {
      const replies = []
      for (let left = 4; left > 0; left--) replies.push(await server.generate({ model: 'm', prompt: 'p' }, { of: left }))
      try {
        await server.generate({ model: 'm', prompt: 'one more' })
      } catch (error) {
        refused = error
      }
      return { status: 200, body: { eval_count: replies.reduce((n, r) => n + (r.eval_count ?? 0), 0) } }
    })) as HttpResult
    // ⌊100 ÷ 3⌋ = 33 tokens for four generations: 8, 8, 8, 9 — and nothing left for a fifth
    expect(sent('/api/generate').map((b) => (b.options as { num_predict: number }).num_predict)).toEqual([8, 8, 8, 9])
    expect(refused).toBeInstanceOf(GenerationBudgetSpentError)
    expect(result.body).toEqual({ eval_count: 33 })
    expect(settledAmounts).toEqual(['99'])
  })

  it('a call whose permit pays for no token is refused 402 before the model server hears of it, and the permit is given back', async () => {
    const header = permit('5')
    // 6 per token: the least a call costs (5) pays for no token
    const refusingMeter = testMeter({ db: db.db, modelServerUrl: ms.url, payments: new CostPayments(paymentOptions(6_000_000n)) })
    const result = (await answered(refusingMeter.call(request(header), async (server) => ({ status: 200, body: await chat(server) })))) as HttpResult
    expect(result.status).toBe(402)
    expect(result.body).toMatchObject({ error: 'insufficient_amount' })
    expect(sent('/api/chat')).toEqual([])
    expect(settledAmounts).toEqual([])
  })
})

describe('x402 upto: streams are billed by the model server’s count, never by their pieces', () => {
  it('attacker: a forced tool call streamed without include_usage is billed every token, and the client gets no usage it did not ask for', async () => {
    // Our model server sends a tool call whole, in one event: 40 tokens in one piece.
    const toolCall = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', index: 0, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city: 'P'.repeat(30) }) } }] }, finish_reason: null }] }
    const finish = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'tool_calls' }] }
    answer = (_path, body) => {
      const usage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true
      return {
        contentType: 'text/event-stream',
        frames: [
          `data: ${JSON.stringify(toolCall)}\n\n`,
          `data: ${JSON.stringify(finish)}\n\n`,
          ...(usage ? [`data: ${JSON.stringify({ ...finish, choices: [], usage: { prompt_tokens: 12, completion_tokens: 40, total_tokens: 52 } })}\n\n`] : []),
          'data: [DONE]\n\n',
        ],
      }
    }
    const body = { model: 'm', stream: true, messages: [{ role: 'user', content: 'weather?' }], tools: [{ type: 'function', function: { name: 'get_weather' } }], tool_choice: 'required', max_tokens: 4096 }
    const result = (await call(permit('2000'), proxied('/v1/chat/completions', body))) as HttpResult
    const text = await readAll(result)
    await waitFor(() => settledAmounts.length === 1)
    // 40 tokens × 3: the model server's count (one piece would have been the minimum, 5)
    expect(settledAmounts).toEqual(['120'])
    expect(sent('/v1/chat/completions')[0]).toMatchObject({ stream_options: { include_usage: true }, max_tokens: 100 })
    expect(text).toContain('get_weather')
    expect(text).not.toContain('"usage"')
    expect(text).toContain('data: [DONE]')

    // a client that asked for the usage gets it, and pays the same
    const asked = (await call(permit('2000'), proxied('/v1/chat/completions', { ...body, stream_options: { include_usage: true } }))) as HttpResult
    expect(await readAll(asked)).toContain('"completion_tokens":40')
    await waitFor(() => settledAmounts.length === 2)
    expect(settledAmounts[1]).toBe('120')
  })

  // Each surface's stream, left by the client before its usage event: the meter reads the rest of it (nothing
  // of it is passed on) and settles the model server's final count — not the pieces the client was sent.
  const surfaces: [string, (words: number) => StreamedEvent[], string, number][] = [
    ['/v1/messages', messagesStream, 'text/event-stream', 12 + 12],
    ['/v1/responses', responsesStream, 'text/event-stream', 12 + 8],
    ['/v1/chat/completions', chatCompletionsStream, 'text/event-stream', 12 + 10],
    ['/api/chat', ollamaChatStream, 'application/x-ndjson', 12 + 9],
    ['/api/generate', ollamaGenerateStream, 'application/x-ndjson', 12 + 1],
  ]
  for (const [surface, streamOf, contentType, tokens] of surfaces) {
    it(`${surface}: a stream the client leaves before its usage is read to the model server's count and settles it`, async () => {
      answer = () => ({ contentType, frames: streamOf(12).map((e) => e.text), delayMs: 5 })
      const run: MeteredRun = surface.startsWith('/api/')
        ? async (server) => ({ status: 200, contentType, stream: await server.generateStreamRaw({ model: 'm', prompt: 'p' }) })
        : proxied(surface as OpenAiPath, { model: 'm', stream: true, stream_options: { include_usage: true } })
      const result = (await call(permit(), run)) as HttpResult
      let read = 0
      for await (const _ of result.stream!) {
        void _
        if (++read === 3) break // the client goes away after three chunks
      }
      await waitFor(() => settledAmounts.length === 1)
      expect(settledAmounts, surface).toEqual([String(tokens * 3)])
      expect(ms.cut, 'the model server was left to finish').toEqual([])
    })
  }

  it('a stream the model server ends without its count (it failed) pays its whole share: never less than it served', async () => {
    answer = () => ({ contentType: 'text/event-stream', frames: [...messagesStream(12).slice(0, 10).map((e) => e.text), 'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"model server gone"}}\n\n'] })
    const result = (await call(permit('120'), proxied('/v1/messages', { model: 'm', stream: true, max_tokens: 30 }))) as HttpResult
    await readAll(result)
    await waitFor(() => settledAmounts.length === 1)
    // it was allowed 30 tokens (the smaller limit the client asked for): 30 × 3
    expect(settledAmounts).toEqual(['90'])
  })
})

describe('x402 upto: a running stream checkpoints what it served (for a replica to bill if this instance dies)', () => {
  it('about once a second its row holds the pieces passed on so far, what they cost and the settle request for that; the end settles the model server’s count', async () => {
    answer = () => ({ contentType: 'text/event-stream', frames: chatCompletionsStream(60).map((e) => e.text), delayMs: 5 })
    const result = (await call(permit('300'), proxied('/v1/chat/completions', { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }))) as HttpResult
    const iterator = result.stream![Symbol.asyncIterator]()
    for (let i = 0; i < 22; i++) await iterator.next()
    const running = () => db.db.selectFrom('cost_payments').selectAll().where('status', '=', 'claimed').where('owner', 'is not', null).executeTakeFirst()
    await waitFor(() => false) // 3 s: a checkpoint or more passes while the client reads nothing more
    const row = await running()
    const tokens = Number(row?.checkpoint_tokens)
    // 22 pieces handed to the client (the first ones framing): at least the 20 with content, one not yet resumed
    expect(tokens).toBeGreaterThanOrEqual(19)
    expect(tokens).toBeLessThanOrEqual(22)
    expect(row?.checkpoint_amount).toBe(String(tokens * 3))
    expect(JSON.parse(row!.checkpoint_request!)).toMatchObject({ paymentRequirements: { amount: String(tokens * 3) } })
    for (;;) if ((await iterator.next()).done) break
    await waitFor(() => settledAmounts.length === 1)
    expect(settledAmounts).toEqual(['210'])
    await vi.waitFor(async () => expect(await running()).toBeUndefined(), { interval: 10, timeout: 10_000 })
  })
})

describe('x402 upto: a whole answer delivers nothing before it is settled', () => {
  it('its checkpoints keep the heartbeat and owe nothing while it runs (a replica taking it, its instance dead, bills 0); the end settles its tokens', async () => {
    answer = () => ({ frames: ollamaGenerateFrames(3, 40) })
    const running = () => db.db.selectFrom('cost_payments').selectAll().where('status', '=', 'claimed').where('owner', 'is not', null).executeTakeFirst()
    let seen: Awaited<ReturnType<typeof running>>
    const result = await call(permit('300'), async (server) => {
      const reply = await server.generate({ model: 'm', prompt: 'p' })
      // 40 tokens generated and counted, none sent: a checkpoint or more passes before the answer is returned
      const claimedAt = Number((await running())?.created_at)
      await vi.waitFor(async () => expect(Number((seen = await running())?.heartbeat_at)).toBeGreaterThan(claimedAt), { interval: 50, timeout: 5_000 })
      return { status: 200, body: { eval_count: reply.eval_count } }
    })
    expect(seen).toMatchObject({ checkpoint_tokens: 0, checkpoint_amount: '0' })
    expect(JSON.parse(seen!.checkpoint_request ?? 'null')).toBeNull()
    expect(result.status).toBe(200)
    expect(settledAmounts).toEqual(['120'])
  })
})

describe("x402 upto: the meter ends a call before its payment's deadline", () => {
  /** The meter of these tests, with payments whose settlement deadline (`PaidCall.settleDeadlineMs`) is `inMs` away. */
  const meterSettlingIn = (inMs: number) => {
    class Deadlined extends CostPayments {
      override async begin(...args: Parameters<CostPayments['begin']>) {
        const paid = await super.begin(...args)
        Object.assign(paid, { settleDeadlineMs: Date.now() + inMs })
        return paid
      }
    }
    return testMeter({ db: db.db, modelServerUrl: ms.url, payments: new Deadlined(paymentOptions()) })
  }

  it('a stream still running when its payment must be settled is ended before then and settled in time, for its whole share', async () => {
    answer = () => ({ frames: ollamaGenerateFrames(2000), delayMs: 20 })
    const started = Date.now()
    // settled by 3 s from now: the meter ends the call 2 s before that
    const result = (await meterSettlingIn(3_000).call(request(permit()), async (server) => ({
      status: 200,
      contentType: 'application/x-ndjson',
      stream: await server.generateStreamRaw({ model: 'm', prompt: 'p' }),
    }))) as HttpResult
    await readAll(result).catch(() => undefined)
    await waitFor(() => settledAmounts.length === 1)
    expect(Date.now() - started).toBeLessThan(2_500)
    expect(ms.cut).toHaveLength(1)
    expect(settledAmounts).toEqual(['300'])
  })

  it('a payment valid for a year is served like any other (its deadline is beyond the longest timer)', async () => {
    answer = () => ({ frames: ollamaChatFrames(4) })
    const result = (await answered(meterSettlingIn(365 * 86_400_000).call(request(permit()), async (server) => ({ status: 200, body: await chat(server) })))) as HttpResult
    expect(result.status).toBe(200)
    expect(settledAmounts).toEqual(['12'])
  })

  it('a payment that must be settled before the call could run is refused 402 payment_expires_too_soon; nothing is generated', async () => {
    answer = () => ({ frames: ollamaChatFrames(3) })
    const header = permit()
    const result = (await answered(meterSettlingIn(1_000).call(request(header), async (server) => ({ status: 200, body: await chat(server) })))) as HttpResult
    expect(result.status).toBe(402)
    expect(result.body).toMatchObject({ error: 'payment_expires_too_soon' })
    expect(ms.requests).toEqual([])
    expect(settledAmounts).toEqual([])
    // the permit was given back: it pays a call that has the time
    expect(((await call(header, async (server) => ({ status: 200, body: await chat(server) }))) as HttpResult).status).toBe(200)
  })
})

describe('x402 upto: claims', () => {
  it('a call that fails before any output settles nothing and gives the permit back; a used permit is 409', async () => {
    answer = () => ({ frames: ollamaChatFrames(1) })
    const header = permit()
    const failed = (await call(header, async () => ({ status: 502, body: { error: 'x', message: 'y' } }))) as HttpResult
    expect(failed.status).toBe(502)
    expect(((await call(header, async (server) => ({ status: 200, body: await chat(server) }))) as HttpResult).status).toBe(200)
    await expect(call(header, async (server) => ({ status: 200, body: await chat(server) }))).rejects.toMatchObject({ code: 'payment_replayed' })
    expect(settledAmounts).toEqual(['5'])
  })

  it('payment-identifier: a retry with a fresh permit but a used identifier is 409 and never settled', async () => {
    answer = () => ({ frames: ollamaChatFrames(2) })
    const id = 'upto_' + randomBytes(12).toString('hex')
    expect(((await call(permit('300', id), async (server) => ({ status: 200, body: await chat(server) }))) as HttpResult).status).toBe(200)
    await expect(call(permit('300', id), async (server) => ({ status: 200, body: await chat(server) }))).rejects.toMatchObject({ code: 'payment_replayed' })
    expect(settledAmounts).toEqual(['6'])
  })
})
