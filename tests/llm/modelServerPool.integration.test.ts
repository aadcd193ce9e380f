import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'

// Several model servers behind one gateway, against two real model servers (ours, with the tiny generated models) behind one gateway:
// calls spread over both, a model on one server only is routed there, stopping one mid-run loses no call that
// had not started streaming, and with both down the gateway answers 502 in the document's error shape.

let engine: Engine
let a: TestModelServer
let b: TestModelServer
let gw: TestGateway
let token: string
let aOpen = true

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
  a = await startTestModelServer({ engine })
  b = await startTestModelServer({ engine })
  // A model only b has.
  const copy = await fetch(`${b.url}/api/copy`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'svc-tiny-chat:latest', destination: 'only-b:latest' }),
  })
  expect(copy.status).toBe(200)
  gw = await startTestGateway({
    modelServerUrl: `${a.url},${b.url}`,
    env: { SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000', SERVICE_QUOTA__COST_CALLS_PER_DAY: '100000' },
  })
  token = await gw.login(privateKeyToAccount(generatePrivateKey()))
})

afterAll(async () => {
  await gw?.close()
  if (aOpen) await a?.close()
  await b?.close()
  await engine?.dispose()
})

const post = (path: string, body: unknown) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: JSON.stringify(body) })

/** Generations a model server answered with 200 (its own metrics). */
async function generated(ms: TestModelServer): Promise<number> {
  const text = await (await fetch(`${ms.url}/metrics`)).text()
  const line = new RegExp(`^modelserver_requests_total\\{operation="generate",status="200"\\} (\\d+)`, 'm').exec(text)
  return Number(line?.[1] ?? 0)
}

type Outcome = { status: number; firstChunkAt: number | undefined; done: boolean; error?: string }

/** A streamed /llm/completion read to the end: when its first chunk came, whether it ended with `done`. */
async function streamed(body: Record<string, unknown>): Promise<Outcome> {
  let res: Response
  try {
    res = await post('/llm/completion', { ...body, stream: true })
  } catch (error) {
    return { status: 0, firstChunkAt: undefined, done: false, error: String(error) }
  }
  if (res.status !== 200) return { status: res.status, firstChunkAt: undefined, done: false, error: await res.text() }
  let firstChunkAt: number | undefined
  let text = ''
  try {
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      firstChunkAt ??= performance.now()
      text += decoder.decode(value, { stream: true })
    }
  } catch (error) {
    return { status: 200, firstChunkAt, done: false, error: String(error) }
  }
  const last = JSON.parse(text.trim().split('\n').at(-1)!) as { done?: boolean; error?: string }
  return { status: 200, firstChunkAt, done: last.done === true, ...(last.error ? { error: last.error } : {}) }
}

describe('several model servers behind the gateway (two live model servers)', () => {
  it('spreads calls over both servers', async () => {
    const before = [await generated(a), await generated(b)]
    // Sequential and concurrent calls: both servers take a share.
    for (let i = 0; i < 4; i++) expect((await post('/llm/completion', { prompt: 'Hi', options: { num_predict: 4, seed: i } })).status).toBe(200)
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => post('/llm/completion', { prompt: 'Hi', options: { num_predict: 4, seed: i } })))
    expect(replies.map((r) => r.status)).toEqual(Array(6).fill(200))
    const shares = [(await generated(a)) - before[0]!, (await generated(b)) - before[1]!]
    expect(shares[0]! + shares[1]!).toBe(10)
    expect(Math.min(...shares)).toBeGreaterThanOrEqual(3)
  })

  it('routes a model present on one server only to that server, and reports each server in /health/detailed', async () => {
    const before = [await generated(a), await generated(b)]
    for (let i = 0; i < 3; i++) {
      const r = await post('/llm/completion', { prompt: 'Hi', model: 'only-b:latest', options: { num_predict: 4 } })
      expect(r.status).toBe(200)
      expect(await r.json()).toMatchObject({ model: 'only-b:latest' })
    }
    expect([(await generated(a)) - before[0]!, (await generated(b)) - before[1]!]).toEqual([0, 3])

    const health = await (await fetch(`${gw.url}/health/detailed`, { headers: { 'x-session-token': token } })).json()
    expect(health.checks.modelserver).toMatchObject({ status: 'ok' })
    const [sa, sb] = health.checks.modelserver.servers
    expect(sa).toMatchObject({ url: a.url, status: 'up', in_flight: 0, last_error: null })
    expect(sa.models).not.toContain('only-b:latest')
    expect(sb).toMatchObject({ url: b.url, status: 'up', in_flight: 0, last_error: null })
    expect(sb.models).toContain('only-b:latest')
    // /llm/v1/models: the union of both servers' lists (each model once), then the agents.
    const models = await (await fetch(`${gw.url}/llm/v1/models`, { headers: { authorization: `Bearer ${token}` } })).json()
    const ids = (models.data as { id: string }[]).map((m) => m.id)
    expect(ids.filter((id) => id === 'only-b:latest')).toHaveLength(1)
    expect(ids.filter((id) => id === 'svc-tiny-chat:latest')).toHaveLength(1)
    const metrics = await (await fetch(`${gw.url}/metrics`)).text()
    expect(metrics).toContain(`gateway_modelserver_up{server="${a.url}"} 1`)
    expect(metrics).toContain(`gateway_modelserver_in_flight{server="${b.url}"} 0`)
  })

  it('stopping one server mid-run loses no call that had not started streaming', async () => {
    const long = { prompt: 'Once upon a time', options: { num_predict: 400, temperature: 0.8, seed: 7 } }
    // A first wave on both servers; once some have started streaming, server a stops; a second wave follows.
    const first = Array.from({ length: 6 }, () => streamed(long))
    await new Promise((r) => setTimeout(r, 150))
    await a.close()
    aOpen = false
    const second = Array.from({ length: 6 }, (_, i) => streamed({ ...long, options: { ...long.options, seed: 20 + i } }))
    const [before, after] = [await Promise.all(first), await Promise.all(second)]
    // Not started on a: the calls sent once a had stopped, and those of the first wave that never got a chunk.
    // (A first-wave chunk read after the stop may still have come from a, relayed late on a loaded machine: a
    // stream may be cut then, so the client's clock does not decide; failed a CI run on Node 24.)
    const notStarted = [...after, ...before.filter((o) => o.firstChunkAt === undefined)]
    // Every call that had not started streaming from a went on to b and ran to the end.
    expect(notStarted.length).toBeGreaterThanOrEqual(6)
    for (const o of notStarted) expect(o).toMatchObject({ status: 200, done: true })
    // Only calls already streaming from a may have been cut.
    for (const o of before.filter((x) => !x.done)) expect(o.firstChunkAt).toBeDefined()

    // Calls sent to a after it stopped were moved on to b (counted per server left).
    const metrics = await (await fetch(`${gw.url}/metrics`)).text()
    const failovers = new RegExp(`^gateway_modelserver_failovers_total\\{server="${a.url}"\\} (\\d+)`, 'm').exec(metrics)
    expect(Number(failovers?.[1] ?? 0)).toBeGreaterThanOrEqual(1)

    const health = await (await fetch(`${gw.url}/health/detailed`, { headers: { 'x-session-token': token } })).json()
    expect(health.status).toBe('degraded')
    expect(health.checks.modelserver).toMatchObject({ status: 'partial', detail: expect.stringContaining(a.url) })
    expect(health.checks.modelserver.servers[0]).toMatchObject({ url: a.url, status: 'down', last_error: expect.any(String) })
  })

  it('all servers down: 502 modelserver_unavailable in the document\'s shape, naming each server', async () => {
    await b.close()
    const r = await post('/llm/completion', { prompt: 'Hi', options: { num_predict: 4 } })
    expect(r.status).toBe(502)
    const body = await r.json()
    expect(body).toMatchObject({ error: 'modelserver_unavailable', message: expect.stringContaining('no model server could take') })
    expect(body.message).toContain(a.url)
    expect(body.message).toContain(b.url)
    b = { ...b, close: async () => {} }
  })

  it('every response matched the document', () => {
    expect(gw.validationErrors).toEqual([])
    expect([...a.mismatches, ...b.mismatches]).toEqual([])
  })
})
