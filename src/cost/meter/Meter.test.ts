import { randomBytes } from 'node:crypto'
import { answered } from '../../../tests/support/answered.js'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../tests/support/testDatabase.js'
import { testMeter } from '../../../tests/support/testMeter.js'
import { ollamaChatFrames, type ScriptedModelServer, startScriptedModelServer } from '../../../tests/support/scriptedModelServer.js'
import type { HttpResult } from '../../shared/http/index.js'
import { readX402Config } from '../../x402/config.js'
import { FacilitatorUnavailableError } from '../../x402/errors.js'
import type { FacilitatorSettleResponse } from '../../x402/FacilitatorClient.js'
import type { Facilitator } from '../../x402/FacilitatorPool.js'
import { CostPayments } from '../CostPayments.js'
import { Meter, type MeteredCallRequest, type MeteredRun } from './Meter.js'

// The settlement rules of paid cost calls, with a facilitator whose verdicts the test chooses (the happy
// path against the real facilitator and chain is tests/llm/paidCostCalls.integration.test.ts). Calls that only
// shape an answer run without the model server; those whose tokens count go to a scripted one.
const PAY_TO = '0x52908400098527886E0F7030069857D2E4169EE7'
const PAYER = '0xCC6Ea14Df3d24fEbEAf620cD8D6ae0e680447f93'
const WALLET = '0x1111111111111111111111111111111111111111'

let db: TestDatabase
let settle: () => Promise<FacilitatorSettleResponse>
let events: string[]
let meter: Meter
let ms: ScriptedModelServer
const facilitator: Facilitator = {
  verify: async () => ({ isValid: true, payer: PAYER }),
  settle: async () => {
    events.push('settle')
    return settle()
  },
}
const settled = async (): Promise<FacilitatorSettleResponse> => ({ success: true, transaction: '0x' + randomBytes(32).toString('hex'), network: 'eip155:8453', payer: PAYER })

beforeAll(async () => {
  db = await createTestDatabase('sqlite')
  const x402 = readX402Config({ SERVICE_X402__PAY_TO_EVM: PAY_TO, FACILITATOR_TOKEN: 't' })
  ms = await startScriptedModelServer(() => ({ frames: ollamaChatFrames(3) }))
  meter = testMeter({ db: db.db, modelServerUrl: ms.url, payments: new CostPayments({ db: db.db, x402, priceAtomic: 1_000n, publicOrigin: 'http://gw.test', facilitator }) })
})
afterAll(async () => {
  await ms?.close()
  await db?.close()
})

const meterCall = (req: MeteredCallRequest, run: MeteredRun) => answered(meter.call(req, run))

/** A fresh, well-formed EVM payment header (the fake facilitator accepts any signature); `id`: its payment identifier. */
function payment(id?: string): Record<string, string> {
  const payload = {
    ...(id ? { extensions: { 'payment-identifier': { info: { required: false, id } } } } : {}),
    x402Version: 2,
    accepted: { scheme: 'exact', network: 'eip155:8453' },
    payload: {
      signature: '0x' + '11'.repeat(65),
      authorization: { from: PAYER, to: PAY_TO, value: '1000', validAfter: '0', validBefore: String(Math.floor(Date.now() / 1000) + 600), nonce: '0x' + randomBytes(32).toString('hex') },
    },
  }
  return { 'payment-signature': Buffer.from(JSON.stringify(payload)).toString('base64') }
}

const request = (headers: Record<string, string>): MeteredCallRequest => ({ wallet: WALLET, overlord: false, headers, route: 'llmChat', method: 'POST', path: '/llm/chat', model: undefined, statusOf: () => 502 })

async function* ndjson(lines: unknown[], onClose?: () => void) {
  try {
    for (const line of lines) {
      events.push('chunk produced')
      yield `${JSON.stringify(line)}\n`
    }
  } finally {
    onClose?.()
  }
}

const claims = () => db.db.selectFrom('cost_payments').select(['payment_id', 'status']).execute()
let seen = 0
/** The usage row recorded since the last call of this (rows are written after the call, in the background). */
async function lastUsage() {
  for (let i = 0; i < 100; i++) {
    const rows = await db.db.selectFrom('llm_usage').selectAll().orderBy(sql`rowid`).execute()
    if (rows.length > seen) {
      seen = rows.length
      return rows.at(-1)!
    }
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('no new usage row')
}

describe('paid cost calls: payment-identifier', () => {
  it('a retry re-signed with the identifier of a paid call is refused 409 and never settled; a call that failed gives the identifier back', async () => {
    settle = settled
    const id = 'retry_' + randomBytes(12).toString('hex')
    const ok = async () => ({ status: 200, body: { model: 'm', message: 'out' } })
    events = []
    const first = (await meterCall(request(payment(id)), ok)) as HttpResult
    expect(first.status).toBe(200)
    expect(events.filter((e) => e === 'settle')).toHaveLength(1)
    const declared = (await meterCall(request({}), ok)) as HttpResult
    // the 402 past the quota declares the extension
    expect(declared.status).toBe(402)
    expect((declared.body as { extensions: Record<string, unknown> }).extensions['payment-identifier']).toMatchObject({ info: { required: false } })
    events = []
    await expect(meterCall(request(payment(id)), ok)).rejects.toMatchObject({ code: 'payment_replayed' })
    expect(events).not.toContain('settle')
    // a call that fails before output releases its claim and its identifier: the retry runs (and pays once)
    const other = 'failed_' + randomBytes(12).toString('hex')
    const failed = (await meterCall(request(payment(other)), async () => ({ status: 502, body: { error: 'x', message: 'y' } }))) as HttpResult
    expect(failed.status).toBe(502)
    events = []
    expect(((await meterCall(request(payment(other)), ok)) as HttpResult).status).toBe(200)
    expect(events.filter((e) => e === 'settle')).toHaveLength(1)
  })
})

describe('paid cost calls: when they settle', () => {
  it('a stream settles after the model produced its first chunk and before the client gets it', async () => {
    events = []
    settle = settled
    const result = await meterCall(request(payment()), async () => ({
      status: 200,
      contentType: 'application/x-ndjson',
      stream: ndjson([
        { model: 'svc-tiny-chat:latest', message: { content: 'a' }, done: false },
        { model: 'svc-tiny-chat:latest', done: true, prompt_eval_count: 4, eval_count: 2, eval_duration_ms: 5 },
      ]),
    }))
    expect(result.status).toBe(200)
    expect(result.headers?.['PAYMENT-RESPONSE']).toBeTruthy()
    for await (const _ of result.stream!) events.push('chunk delivered')
    expect(events).toEqual(['chunk produced', 'settle', 'chunk delivered', 'chunk produced', 'chunk delivered'])
    const usage = await lastUsage()
    expect(usage).toMatchObject({ outcome: 'ok', paid_by: 'payment', streamed: 1, amount_atomic: '1000' })
    expect(usage.payment_id).toMatch(/^pay_/)
    expect(usage.ttft_ms).not.toBeNull()
  })

  it("records the model server's own counts of the call (not the answer's), summed over its generations", async () => {
    settle = settled
    const result = await meterCall(request(payment()), async (server) => {
      const first = await server.chat({ model: 'm', messages: [{ role: 'user', content: 'a' }] })
      const streamed = await server.chatStream({ model: 'm', messages: [{ role: 'user', content: 'b' }] })
      async function* lines() {
        for await (const batch of streamed) for (const chunk of batch) yield `${JSON.stringify({ ...chunk, eval_count: 999 })}\n`
      }
      return { status: 200, contentType: 'application/x-ndjson', stream: lines(), headers: { 'x-first': String(first.eval_count) } }
    })
    for await (const _ of result.stream!) void _
    // each generation of the scripted model server reports prompt_eval_count 3 and eval_count 3
    expect(await lastUsage()).toMatchObject({ outcome: 'ok', prompt_tokens: 6, completion_tokens: 6, streamed: 1 })
  })

  it('a refused settlement answers 402 with the requirements instead of the output, and frees the payload', async () => {
    events = []
    settle = async () => ({ success: false, errorReason: 'insufficient_funds', transaction: '', network: 'eip155:8453' })
    const before = (await claims()).length
    const result = (await meterCall(request(payment()), async () => ({ status: 200, body: { model: 'm', message: 'the output' } }))) as HttpResult
    expect(result.status).toBe(402)
    expect(result.body).toMatchObject({ x402Version: 2, error: 'invalid_payment', message: 'settlement failed: insufficient_funds' })
    expect(JSON.stringify(result.body)).not.toContain('the output')
    expect(await claims()).toHaveLength(before)
  })

  it('a settle whose outcome is unknown is a 502 and keeps the claim: the payload never runs again', async () => {
    events = []
    settle = async () => {
      throw new FacilitatorUnavailableError('settle', new Error('socket hang up'))
    }
    const header = payment()
    await expect(meterCall(request(header), async () => ({ status: 200, body: {} }))).rejects.toBeInstanceOf(FacilitatorUnavailableError)
    expect((await claims()).filter((c) => c.status === 'settle_unknown')).toHaveLength(1)
    await expect(meterCall(request(header), async () => ({ status: 200, body: {} }))).rejects.toMatchObject({ code: 'payment_replayed' })
  })

  it('a call that fails before output (thrown, an error status, or an error as the first line) settles nothing and frees the payload', async () => {
    settle = settled
    events = []
    const header = payment()
    await expect(meterCall(request(header), async () => Promise.reject(new Error('model server down')))).rejects.toThrow('model server down')
    expect((await meterCall(request(header), async () => ({ status: 404, body: { error: { message: 'no model' } } }))).status).toBe(404)
    const failed = await meterCall(request(header), async () => ({ status: 200, stream: ndjson([{ error: 'modelserver_unavailable', message: 'gone' }]) }))
    expect(failed.headers?.['PAYMENT-RESPONSE']).toBeUndefined()
    for await (const _ of failed.stream!) {
      // drain
    }
    expect(events).not.toContain('settle')
    await new Promise((r) => setTimeout(r, 50))
    expect((await lastUsage()).outcome).toBe('error')
    // Still unclaimed: the same payload pays a call that works.
    const ok = await meterCall(request(header), async () => ({ status: 200, body: { model: 'm' } }))
    expect(ok.status).toBe(200)
    expect(events).toEqual(['chunk produced', 'settle'])
    expect(await lastUsage()).toMatchObject({ outcome: 'ok', amount_atomic: '1000' })
  })

  it('a client that leaves mid-stream stops the upstream and is recorded as cancelled (still paid: output was produced)', async () => {
    settle = settled
    events = []
    let upstreamClosed = false
    const result = await meterCall(request(payment()), async () => ({
      status: 200,
      stream: ndjson(Array.from({ length: 5 }, () => ({ model: 'svc-tiny-chat:latest', done: false })), () => {
        upstreamClosed = true
      }),
    }))
    for await (const _ of result.stream!) break
    expect(upstreamClosed).toBe(true)
    expect(await lastUsage()).toMatchObject({ outcome: 'cancelled', amount_atomic: '1000' })
  })


  it('a client that leaves while the upstream is awaited is recorded as cancelled, though its aborted request fails the stream', async () => {
    settle = settled
    events = []
    const client = new AbortController()
    // The model-server request follows the client's signal: aborted, its stream fails with an abort error
    // before the consumer (the HTTP response) has returned the stream.
    async function* upstream() {
      yield `${JSON.stringify({ model: 'svc-tiny-chat:latest', message: { content: 'a' }, done: false })}\n`
      await new Promise((_, reject) => client.signal.addEventListener('abort', () => reject(client.signal.reason), { once: true }))
    }
    const result = await meterCall({ ...request(payment()), signal: client.signal }, async () => ({ status: 200, stream: upstream() }))
    const iterator = result.stream![Symbol.asyncIterator]()
    await iterator.next()
    const waiting = iterator.next()
    client.abort()
    await expect(waiting).rejects.toBeDefined()
    expect(await lastUsage()).toMatchObject({ outcome: 'cancelled' })
  })

  it('the overlord never pays, even when it sends a payment', async () => {
    events = []
    const result = await meterCall({ ...request(payment()), overlord: true }, async () => ({ status: 200, body: { model: 'm' } }))
    expect(result.status).toBe(200)
    expect(result.headers?.['PAYMENT-RESPONSE']).toBeUndefined()
    expect(events).toEqual([])
    expect(await lastUsage()).toMatchObject({ paid_by: 'overlord', payment_id: null })
  })
})
