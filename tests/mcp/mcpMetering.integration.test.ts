/**
 * MCP tool calls count like the HTTP requests of their twins, per call and not per `/mcp` request: the
 * per-address rate limit (one POST may carry a batch of up to 32 tool calls) and the daily quota of the wallet
 * and of its network (`chat` is `POST /llm/chat`). Attacker tests: a batch that would ride on one rate-limit
 * count, and MCP `chat` used to get past the network's quota with fresh wallets.
 */
import { randomBytes } from 'node:crypto'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeModelServer, startFakeModelServer } from '../support/fakeModelServer.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'

let model: FakeModelServer
beforeAll(async () => {
  model = await startFakeModelServer()
})
afterAll(async () => model?.close())

type RpcResult = { id: number; result?: { isError?: boolean; structuredContent?: Record<string, unknown> }; error?: unknown }

/** One POST /mcp carrying `calls` as one JSON-RPC batch of `tools/call` (the endpoint is stateless). */
async function batch(gw: TestGateway, calls: { name: string; arguments: Record<string, unknown> }[], headers: Record<string, string> = {}): Promise<{ status: number; results: RpcResult[] }> {
  const body = calls.map((c, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: c }))
  const res = await fetch(`${gw.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...headers },
    body: JSON.stringify(body),
  })
  const answer = res.status === 200 ? ((await res.json()) as RpcResult[] | RpcResult) : []
  const results = (Array.isArray(answer) ? answer : [answer]).sort((a, b) => a.id - b.id)
  return { status: res.status, results }
}

/** A well-formed upload id no upload has (`upl_` + a ULID's 26 Crockford base-32 characters). */
const unknownUploadId = () => `upl_${Array.from(randomBytes(26), (b) => '0123456789ABCDEFGHJKMNPQRSTVWXYZ'[b % 32]).join('')}`

const errorOf = (r: RpcResult) => (r.result?.isError ? String(r.result.structuredContent?.error) : 'ok')
const chat = { name: 'chat', arguments: { messages: [{ role: 'user', content: 'hello' }] } }

describe('MCP tool calls against the per-address rate limit', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ modelServerUrl: model.url, env: { SERVICE_RATE_LIMIT__MAX: '30', SERVICE_RATE_LIMIT__WINDOW_S: '60' } })
  })
  afterAll(async () => gw?.close())

  it('attacker: a batch of tool calls in one POST takes one count per call — past the limit a call is rate_limited, and so is the next request', async () => {
    // a counted request (the health probes are not counted) tells what is left
    const probe = await fetch(`${gw.url}/login`)
    const remaining = Number(/remaining=(\d+)/.exec(probe.headers.get('ratelimit') ?? '')?.[1])
    expect(remaining).toBeGreaterThan(3)
    // the POST takes one count and its first tool call rides on it; each further call takes one more
    const calls = Array.from({ length: remaining + 3 }, () => ({ name: 'verify_upload', arguments: { upload_id: unknownUploadId() } }))
    const { status, results } = await batch(gw, calls)
    expect(status).toBe(200)
    const outcomes = results.map(errorOf)
    expect(outcomes.filter((o) => o === 'upload_not_found')).toHaveLength(remaining)
    expect(outcomes.filter((o) => o === 'rate_limited')).toHaveLength(3)
    const limited = results.find((r) => errorOf(r) === 'rate_limited')!
    expect(limited.result!.structuredContent).toMatchObject({ details: { retry_after_s: expect.any(Number) } })
    expect((await fetch(`${gw.url}/login`)).status).toBe(429)
    expect(gw.validationErrors).toEqual([])
  })
})

describe('MCP chat against the daily quota of the wallet and of its network', () => {
  let gw: TestGateway
  beforeAll(async () => {
    gw = await startTestGateway({ modelServerUrl: model.url, env: { SERVICE_QUOTA__COST_CALLS_PER_DAY: '2', SERVICE_QUOTA__COST_CALLS_PER_NETWORK_PER_DAY: '3' } })
  })
  afterAll(async () => gw?.close())

  it('a batch of chat calls takes one unit per call; fresh wallets on one network get no more than the network quota, through MCP or HTTP', async () => {
    const first = { 'x-session-token': await gw.login(privateKeyToAccount(generatePrivateKey())) }
    const { results } = await batch(gw, [chat, chat, chat], first)
    expect(results.map(errorOf).sort()).toEqual(['ok', 'ok', 'quota_exceeded'])

    // A fresh wallet on the same network: one unit of the network's three is left.
    const second = { 'x-session-token': await gw.login(privateKeyToAccount(generatePrivateKey())) }
    expect((await batch(gw, [chat], second)).results.map(errorOf)).toEqual(['ok'])
    const http = await fetch(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...second }, body: JSON.stringify(chat.arguments) })
    expect(http.status).toBe(402)
    expect(await http.json()).toMatchObject({ error: 'quota_exceeded', details: { scope: 'network' } })
    const third = { 'x-session-token': await gw.login(privateKeyToAccount(generatePrivateKey())) }
    const refused = (await batch(gw, [chat], third)).results[0]!
    expect(refused.result?.structuredContent).toMatchObject({ error: 'quota_exceeded', details: { scope: 'network' } })

    // each chat call that ran is one usage row of its own
    await new Promise((r) => setTimeout(r, 200))
    const rows = await gw.gateway.services.db.selectFrom('llm_usage').select(['route', 'paid_by']).where('route', '=', 'mcpCall').execute()
    expect(rows).toHaveLength(3)
    expect(gw.validationErrors).toEqual([])
  })
})
