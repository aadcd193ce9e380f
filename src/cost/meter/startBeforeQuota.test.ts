import { randomBytes } from 'node:crypto'
import { answered } from '../../../tests/support/answered.js'
import { Worker } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../tests/support/testDatabase.js'
import { CostQuota, QuotaExceededError } from '../../auth/CostQuota.js'
import { ModelServerPool } from '../../modelserverClient/ModelServerPool.js'
import type { HttpResult } from '../../shared/http/index.js'
import { createCapturingLogger } from '../../../tests/support/createCapturingLogger.js'
import { readX402Config } from '../../x402/config.js'
import { CostPayments } from '../CostPayments.js'
import { LlmMetrics } from '../LlmMetrics.js'
import { UsageLedger } from '../UsageLedger.js'
import { Meter, type MeteredCallRequest, type MeteredRun } from './Meter.js'

// A cost call that only asks the model server starts while its quota unit is taken (the gateway's
// time to first token). What users rely on: no output before the unit is secured, a refused call stops the
// model server at once and answers as before, a failed call gives its unit back.

const PAY_TO = '0x52908400098527886E0F7030069857D2E4169EE7'
const wallet = () => `0x${randomBytes(20).toString('hex')}`

/**
 * A model server in a worker thread (its own event loop, so it receives requests while the test's loop is
 * blocked, as the real one in its own process does): `POST /api/generate` streams 200 NDJSON chunks (1 for the
 * prompt `short`), one every 10 ms, and reports when each request arrived (wall clock) and how many chunks it had written if the
 * connection closed before the end.
 */
const serverCode = `
const http = require('node:http')
const { parentPort } = require('node:worker_threads')
const server = http.createServer((req, res) => {
  const at = Date.now()
  let body = ''
  req.on('data', (d) => (body += d))
  req.on('end', () => {
    parentPort.postMessage({ type: 'request', at })
    const total = JSON.parse(body).prompt === 'short' ? 1 : 200
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    let sent = 0
    const timer = setInterval(() => {
      sent++
      const done = sent === total
      res.write(JSON.stringify({ model: 'm', created_at: 'now', response: 'x', done }) + '\\n')
      if (done) { clearInterval(timer); res.end() }
    }, 10)
    res.on('close', () => {
      clearInterval(timer)
      if (sent < total) parentPort.postMessage({ type: 'closed', sent })
    })
  })
})
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }))
`

type ServerEvent = { type: 'request'; at: number } | { type: 'closed'; sent: number } | { type: 'listening'; port: number }

let db: TestDatabase
let worker: Worker
let pool: ModelServerPool
const serverEvents: ServerEvent[] = []
const nextEvent = (type: ServerEvent['type'], after: number) =>
  new Promise<ServerEvent>((resolve, reject) => {
    const timeout = setTimeout(() => reject(new Error(`no ${type} from the model server`)), 5000)
    const check = () => {
      const found = serverEvents.slice(after).find((e) => e.type === type)
      if (found) {
        clearTimeout(timeout)
        worker.off('message', check)
        resolve(found)
      }
    }
    worker.on('message', check)
    check()
  })

beforeAll(async () => {
  db = await createTestDatabase('sqlite')
  worker = new Worker(serverCode, { eval: true })
  worker.on('message', (e: ServerEvent) => serverEvents.push(e))
  const listening = (await nextEvent('listening', 0)) as { port: number }
  pool = new ModelServerPool({ baseUrls: [`http://127.0.0.1:${listening.port}`], timeoutMs: 5000 })
})
afterAll(async () => {
  await worker?.terminate()
  await db?.close()
})

const meterWith = (quota: CostQuota, payments = false): Meter =>
  new Meter({
    pool,
    quota,
    payments: new CostPayments({
      db: db.db,
      x402: readX402Config(payments ? { SERVICE_X402__PAY_TO_EVM: PAY_TO, FACILITATOR_TOKEN: 't' } : {}),
      priceAtomic: 1_000n,
      publicOrigin: 'http://gw.test',
      facilitator: { verify: async () => ({ isValid: false }), settle: async () => ({ success: false, transaction: '', network: '' }) },
    }),
    usage: new UsageLedger(db.db, () => Math.floor(Date.now() / 1000)),
    metrics: new LlmMetrics(['m']),
    logger: createCapturingLogger().logger,
    defaultModel: 'm',
  })

const request = (w: string): MeteredCallRequest => ({ wallet: w, overlord: false, headers: {}, route: 'llmGenerate', method: 'POST', path: '/llm/generate', model: 'm', startBeforeQuota: true, statusOf: () => 502 })

/** The call as `/llm/generate` makes it: the model server's stream through the meter. */
const generateWith =
  (prompt: string): MeteredRun =>
  async (server) => ({ status: 200, contentType: 'application/x-ndjson', stream: await server.generateStreamRaw({ model: 'm', prompt }) })
const generate = generateWith('a long story')

/** A quota whose `consume` takes as long as the test says (a slow store), logging when it starts and ends. */
class SlowQuota extends CostQuota {
  constructor(
    private readonly events: string[],
    private readonly wait: () => Promise<void> | void,
    limit = 100,
  ) {
    super(db.db, limit)
  }
  override async consume(w: string) {
    this.events.push('quota: consume started')
    await this.wait()
    const state = await super.consume(w)
    this.events.push('quota: unit secured')
    return state
  }
}

describe('a model call started while its quota unit is taken', () => {
  it('is sent before the unit is taken, but nothing of it is passed on before the unit is secured', async () => {
    const events: string[] = []
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const meter = meterWith(new SlowQuota(events, () => gate))
    let answered = false
    const answer = meter.call(request(wallet()), async () => {
      events.push('call: started')
      // node:http writes a request on a kept-alive connection in a nextTick: that write must come before the commit.
      process.nextTick(() => events.push('call: request written'))
      return {
        status: 200,
        stream: (async function* () {
          events.push('call: first chunk produced')
          yield '{"response":"a","done":false}\n'
          yield '{"done":true,"eval_count":1}\n'
        })(),
      }
    }).then((result) => {
      answered = true
      return result
    })
    await new Promise((r) => setTimeout(r, 30))
    expect(events).toEqual(['call: started', 'call: request written', 'quota: consume started'])
    expect(answered).toBe(false)
    release()
    const result = await answer
    for await (const _ of result.stream!) events.push('client: chunk')
    expect(events).toEqual([
      'call: started',
      'call: request written',
      'quota: consume started',
      'quota: unit secured',
      'call: first chunk produced',
      'client: chunk',
      'client: chunk',
    ])
  })

  it('reaches the model server while a blocking commit (SQLite fsync) holds the event loop', async () => {
    // A kept-alive connection first, as on a gateway that has served a call (a new one connects asynchronously).
    const warm = await meterWith(new CostQuota(db.db, 100)).call(request(wallet()), generateWith('short'))
    for await (const _ of warm.stream!) void _
    const from = serverEvents.length
    let commit = { start: 0, end: 0 }
    const blocking = new SlowQuota([], () => {
      commit.start = Date.now()
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300) // the event loop is blocked, as by an fsync
      commit.end = Date.now()
    })
    const result = await meterWith(blocking).call(request(wallet()), generate)
    const arrived = (await nextEvent('request', from)) as { at: number }
    for await (const _ of result.stream!) break
    await nextEvent('closed', from) // the client left after one chunk: the model server's request is closed
    expect(commit.end - commit.start).toBeGreaterThanOrEqual(290)
    // The model server had the request while the commit blocked (not only once it was over).
    expect(arrived.at).toBeLessThan(commit.end - 200)
  })

  it('refused by the quota (another instance took the last unit): 402 with the requirements, and the model server stops at once', async () => {
    const w = wallet()
    // A commit that takes 50 ms (a slow disk): long enough for the model server to have started generating.
    const here = new SlowQuota([], () => new Promise((r) => setTimeout(r, 50)), 1)
    await new CostQuota(db.db, 1).consume(w) // the other instance
    expect(here.likelyAvailable(w)).toBe(true)
    const from = serverEvents.length
    const result = (await answered(meterWith(here, true).call(request(w), generate))) as HttpResult
    expect(result.status).toBe(402)
    expect(result.body).toMatchObject({ x402Version: 2, error: 'quota_exceeded' })
    expect(result.stream).toBeUndefined()
    // The model server had been asked, and its request was closed long before its 200 chunks (2 s) were out.
    await nextEvent('request', from)
    const closed = (await nextEvent('closed', from)) as { sent: number }
    expect(closed.sent).toBeLessThan(20)
  })

  it('refused without payments configured: quota_exceeded as before, and the call is stopped', async () => {
    const w = wallet()
    const here = new CostQuota(db.db, 1)
    await new CostQuota(db.db, 1).consume(w)
    const from = serverEvents.length
    await expect(meterWith(here).call(request(w), generate)).rejects.toBeInstanceOf(QuotaExceededError)
    // Cut before or just after it reached the model server: whatever reached it was closed at once.
    await new Promise((r) => setTimeout(r, 200))
    const seen = serverEvents.slice(from)
    expect(seen.filter((e) => e.type === 'closed')).toHaveLength(seen.filter((e) => e.type === 'request').length)
    for (const e of seen) if (e.type === 'closed') expect(e.sent).toBeLessThan(20)
  })

  it('a wallet this instance saw at its limit gets no head start: the model server is not asked', async () => {
    const w = wallet()
    const quota = new CostQuota(db.db, 1)
    const first = await meterWith(quota).call(request(w), async () => ({ status: 200, body: { eval_count: 1 } }))
    expect(first.status).toBe(200)
    let started = 0
    const second = (await answered(
      meterWith(quota, true).call(request(w), async () => {
        started++
        return { status: 200, body: {} }
      }),
    )) as HttpResult
    expect(second.status).toBe(402)
    expect(started).toBe(0)
  })

  it('gives the unit back when the model server fails', async () => {
    const w = wallet()
    const quota = new CostQuota(db.db, 5)
    await expect(
      meterWith(quota).call(request(w), async () => {
        throw new Error('model server down')
      }),
    ).rejects.toThrow('model server down')
    expect((await quota.state(w)).used).toBe(0)
    const refused = await meterWith(quota).call(request(w), async () => ({ status: 502, body: { error: 'modelserver_unavailable', message: 'down' } }))
    expect(refused.status).toBe(502)
    expect((await quota.state(w)).used).toBe(0)
  })

  it('follows the client: a client gone before the quota answered aborts the call too', async () => {
    const client = new AbortController()
    const from = serverEvents.length
    const pending = meterWith(new SlowQuota([], () => new Promise((r) => setTimeout(r, 20)))).call({ ...request(wallet()), signal: client.signal }, generate)
    await nextEvent('request', from)
    client.abort()
    expect(((await nextEvent('closed', from)) as { sent: number }).sent).toBeLessThan(20)
    // the call fails (its model-server request was cut), whether before its answer or in its stream
    await expect(
      pending.then(async (result) => {
        for await (const _ of result.stream!) void _
      }),
    ).rejects.toBeDefined()
  })
})
