/**
 * A credential store that fails is not a bad credential. While the sessions, API keys or sign-in nonces cannot be
 * read, a request carrying a credential is answered 503 `credentials_unavailable` with `Retry-After` — in its
 * route's error shape (the gateway's, OpenAI's, Anthropic's) and as the document declares — never the 401 that
 * makes a front end or an SDK sign its user out. Once the store is back, the same credentials work: nobody was
 * signed out. A credential that is really wrong is still a 401 while the store is up. On SQLite and on PostgreSQL.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { sql } from 'kysely'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { encodeSIWxHeader } from '@x402/extensions/sign-in-with-x'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { siwxProof } from '../support/siwxProof.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { createLlmKey, walletLogin } from '../support/walletLogin.js'

let gw: TestGateway

/** `table` unreadable while `during` runs (renamed away and back, as a lost or locked database answers). */
async function withTableAway<T>(table: string, during: () => Promise<T>): Promise<T> {
  await sql`ALTER TABLE ${sql.table(table)} RENAME TO ${sql.table(`${table}_away`)}`.execute(gw.database.db)
  try {
    return await during()
  } finally {
    await sql`ALTER TABLE ${sql.table(`${table}_away`)} RENAME TO ${sql.table(table)}`.execute(gw.database.db)
  }
}

const get = (path: string, headers: Record<string, string>) => fetch(`${gw.url}${path}`, { headers: { accept: 'application/json', ...headers } })

describe.each(['sqlite', 'postgres'] as const)('a credential store that fails (%s)', (dialect) => {
  beforeAll(async () => {
    gw = await startTestGateway({ dialect, env: { SERVICE_LOGIN__CHAIN_ID: '8453' } })
  })
  afterAll(async () => gw?.close())

  it('a session token: 503 credentials_unavailable with Retry-After, then the same token works', async () => {
    // a token this instance never checked (a checked one is answered from memory)
    const token = await walletLogin(gw.url, privateKeyToAccount(generatePrivateKey()))
    const during = await withTableAway('sessions', async () => {
      const res = await get('/llm/usage?days=1', { 'x-session-token': token })
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }
    })
    expect(during).toEqual({ status: 503, retryAfter: '5', body: { error: 'credentials_unavailable', message: 'Credentials cannot be checked right now; retry shortly.', details: { retry_after_s: 5 } } })
    expect((await get('/llm/usage?days=1', { 'x-session-token': token })).status).toBe(200)
    expect(gw.validationErrors).toEqual([])
  })

  it('a closed path checked by the gate: 503, not the 401 of a missing session', async () => {
    const token = await walletLogin(gw.url, privateKeyToAccount(generatePrivateKey()))
    const status = await withTableAway('sessions', async () => (await get('/health/detailed', { 'x-session-token': token })).status)
    expect(status).toBe(503)
    expect((await get('/health/detailed', { 'x-session-token': token })).status).toBe(200)
    expect(gw.validationErrors).toEqual([])
  })

  it('an /llm API key on the OpenAI and Anthropic routes: 503 in their shapes (SDKs retry it, and do not drop the key)', async () => {
    const key = await createLlmKey(gw.url, await walletLogin(gw.url, privateKeyToAccount(generatePrivateKey())))
    const [openai, anthropic] = await withTableAway('llm_keys', async () => {
      const models = await get('/llm/v1/models', { authorization: `Bearer ${key}` })
      const messages = await fetch(`${gw.url}/llm/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'svc-tiny-chat:latest', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
      })
      return [
        { status: models.status, retryAfter: models.headers.get('retry-after'), body: await models.json() },
        { status: messages.status, body: await messages.json() },
      ]
    })
    expect(openai).toMatchObject({ status: 503, retryAfter: '5', body: { error: { type: 'server_error', code: 'credentials_unavailable' } } })
    expect(anthropic).toMatchObject({ status: 503, body: { type: 'error', error: { type: 'overloaded_error' } } })
    // the key is accepted again: the call goes on to the model server (none runs beside this gateway)
    const after = await get('/llm/v1/models', { authorization: `Bearer ${key}` })
    expect({ status: after.status, body: await after.json() }).toMatchObject({ status: 502, body: { error: { code: 'modelserver_unavailable' } } })
    expect(gw.validationErrors).toEqual([])
  })

  it('a sign-in-with-x proof whose nonce cannot be recorded: 503, and the proof is still good afterwards', async () => {
    const headers = { 'SIGN-IN-WITH-X': encodeSIWxHeader(await siwxProof(privateKeyToAccount(generatePrivateKey()), 'http://gw.test/llm/usage')) }
    const status = await withTableAway('siwx_nonces', async () => (await get('/llm/usage?days=1', headers)).status)
    expect(status).toBe(503)
    expect((await get('/llm/usage?days=1', headers)).status).toBe(200)
    expect(gw.validationErrors).toEqual([])
  })

  it('a sign-in-with-x proof in an MCP tool call: a tool result credentials_unavailable, not a protocol error nor auth_required', async () => {
    const client = new Client({ name: 'outage-agent', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`)))
    const proof = encodeSIWxHeader(await siwxProof(privateKeyToAccount(generatePrivateKey()), 'http://gw.test/mcp'))
    const result = (await withTableAway('siwx_nonces', () =>
      client.callTool({ name: 'chat', arguments: { messages: [{ role: 'user', content: 'Hi' }] }, _meta: { 'sign-in-with-x': proof } }),
    )) as { isError?: boolean; structuredContent?: unknown }
    await client.close()
    expect(result.isError).toBe(true)
    expect(result.structuredContent).toMatchObject({ error: 'credentials_unavailable' })
  })

  it('where a request may also come in anonymously (POST /mcp), a token sent that cannot be checked is still a 503, never served as nobody', async () => {
    const token = await walletLogin(gw.url, privateKeyToAccount(generatePrivateKey()))
    const list = () =>
      fetch(`${gw.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', 'x-session-token': token },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      })
    const during = await withTableAway('sessions', async () => (await list()).status)
    expect(during).toBe(503)
    expect((await list()).status).toBe(200)
    expect(gw.validationErrors).toEqual([])
  })

  it('a store that fails past the credential check is a documented 500 internal_error, without its details', async () => {
    const token = await walletLogin(gw.url, privateKeyToAccount(generatePrivateKey()))
    expect((await get('/llm/keys', { 'x-session-token': token })).status).toBe(200) // the session is checked (and remembered)
    const during = await withTableAway('llm_keys', async () => {
      const res = await get('/llm/keys', { 'x-session-token': token })
      return { status: res.status, body: await res.json() }
    })
    expect(during).toEqual({ status: 500, body: { error: 'internal_error', message: 'internal error' } })
    expect(gw.validationErrors).toEqual([])
  })

  it('while the store is up, a wrong credential is still the 401 it always was', async () => {
    expect((await get('/llm/usage?days=1', { 'x-session-token': 'st_not-a-session' })).status).toBe(401)
    expect((await get('/llm/v1/models', { authorization: 'Bearer sk-p2s-not-a-key' })).status).toBe(401)
  })
})
