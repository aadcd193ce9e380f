/**
 * The session and agent-registry caches stay correct across gateway instances: two gateways on
 * one database, each with its own connections and its own caches.
 * - PostgreSQL: a session used on A (so cached there) and revoked through B is refused by A's very next
 *   request, 50 times in a row; an agent evolved through B shows on A's next `GET /agents`; a revision
 *   written by plain SQL (any writer) shows on A's `GET /agents` as soon as its NOTIFY arrives; with A's
 *   listening connection terminated A still answers correctly (caches bypassed) and caches again once it is
 *   listening.
 * - SQLite: a write through the gateway's own kysely `db` and a revocation by a second connection on the file
 *   are both seen by the next request.
 */
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { PostgresChangeFeed } from '../../src/cache/postgresChangeFeed.js'
import { startFakeModelServer, type FakeModelServer } from '../support/fakeModelServer.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'

const agents = async (gw: TestGateway, token: string) => {
  const r = await fetch(`${gw.url}/agents`, { headers: { 'x-session-token': token } })
  return { status: r.status, body: r.status === 200 ? ((await r.json()) as { agents: { id: string; revision: number; model: string }[] }) : undefined }
}
const logout = (gw: TestGateway, token: string) => fetch(`${gw.url}/users/logout`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: '{}' })
const cacheEvents = async (gw: TestGateway, cache: string, event: string) => {
  const text = await gw.gateway.services.metricsText()
  const line = text.split('\n').find((l) => l.startsWith(`gateway_cache_events_total{cache="${cache}",event="${event}"}`))
  return line ? Number(line.split(' ').at(-1)) : 0
}

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe('caches across two gateway instances on one PostgreSQL schema', () => {
  let a: TestGateway
  let b: TestGateway
  let model: FakeModelServer
  beforeAll(async () => {
    model = await startFakeModelServer()
    a = await startTestGateway({ dialect: 'postgres', modelServerUrl: model.url })
    b = await startTestGateway({ databaseUrl: a.databaseUrl, modelServerUrl: model.url })
    expect(a.database.changeFeed!.live() && b.database.changeFeed!.live()).toBe(true)
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    await model?.close()
  })

  it('a session revoked through B is refused by A at its very next request (50 times)', async () => {
    const hitsBefore = await cacheEvents(a, 'session', 'hit')
    for (let i = 0; i < 50; i++) {
      const token = await b.login(privateKeyToAccount(generatePrivateKey()))
      expect((await agents(a, token)).status).toBe(200) // read from the database, now cached on A
      expect((await agents(a, token)).status).toBe(200) // from A's cache
      expect((await logout(b, token)).status).toBe(204)
      expect((await agents(a, token)).status).toBe(401)
      expect((await agents(b, token)).status).toBe(401)
    }
    expect((await cacheEvents(a, 'session', 'hit')) - hitsBefore).toBeGreaterThanOrEqual(50)
    expect(a.validationErrors).toEqual([])
  })

  it('an agent evolved through B shows at its new revision on A’s very next GET /agents (10 times)', async () => {
    const token = await b.login(privateKeyToAccount(generatePrivateKey()))
    for (let i = 0; i < 10; i++) {
      await agents(a, token)
      const hits = await cacheEvents(a, 'agent_registry', 'hit')
      await agents(a, token)
      expect(await cacheEvents(a, 'agent_registry', 'hit')).toBe(hits + 1) // A answers from memory
      const evolve = await fetch(`${b.url}/agents/ceo/evolve`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: JSON.stringify({ goal: `be brief ${i}` }) })
      expect(evolve.status).toBe(200)
      const { revision } = (await evolve.json()) as { revision: number }
      expect((await agents(a, token)).body!.agents.find((x) => x.id === 'ceo')!.revision).toBe(revision)
    }
    expect(b.validationErrors).toEqual([])
  })

  it('a revision written by plain SQL on another connection shows on GET /agents of A as soon as the NOTIFY arrives', async () => {
    // Not "at once": nothing tells A about a write by another program before PostgreSQL delivers the NOTIFY
    // (under a millisecond, but asynchronous). A revision written through a gateway waits for every instance (`ChangeFeed.barrier`).
    const token = await a.login(privateKeyToAccount(generatePrivateKey()))
    const before = (await agents(a, token)).body!.agents.find((x) => x.id === 'ceo')!
    const manual = new pg.Client({ connectionString: a.databaseUrl })
    await manual.connect()
    try {
      for (let revision = before.revision + 1; revision <= before.revision + 20; revision++) {
        const hits = await cacheEvents(a, 'agent_registry', 'hit')
        await agents(a, token)
        expect(await cacheEvents(a, 'agent_registry', 'hit')).toBe(hits + 1) // A answers from memory …
        await manual.query(`INSERT INTO agent_revisions (agent, revision, instructions, model, created_at) VALUES ('ceo', $1, 'i', $2, 1)`, [revision, `m${revision}`])
        const shown = async () => (await agents(a, token)).body!.agents.find((x) => x.id === 'ceo')!.revision === revision
        await until(`revision ${revision} on A`, shown, 1_000) // … until the NOTIFY of the insert arrives
      }
    } finally {
      await manual.end()
    }
  })

  it('with its listening connection terminated, A stays correct (caches bypassed) and caches again once listening', async () => {
    const feed = a.database.changeFeed as PostgresChangeFeed
    const token = await a.login(privateKeyToAccount(generatePrivateKey()))
    await agents(a, token)
    const admin = new pg.Client({ connectionString: a.databaseUrl })
    await admin.connect()
    try {
      await admin.query('SELECT pg_terminate_backend($1)', [feed.backendPid()])
      await until('A to notice', () => !feed.live())
      // While A is not listening a revocation cannot reach it by NOTIFY: A must read the database (its
      // cached entry for `token` would still say "live").
      await admin.query('UPDATE sessions SET revoked_at = 1') // every session, behind A's back
      expect((await agents(a, token)).status).toBe(401)
      expect(feed.live()).toBe(false) // that answer was given while A was not listening (reconnects after ≥ 500 ms)
      const other = await a.login(privateKeyToAccount(generatePrivateKey()))
      expect((await agents(a, other)).status).toBe(200)
      await until('A to listen again', () => feed.live())
      const fresh = await a.login(privateKeyToAccount(generatePrivateKey()))
      await agents(a, fresh)
      const hits = await cacheEvents(a, 'session', 'hit')
      expect((await agents(a, fresh)).status).toBe(200)
      expect(await cacheEvents(a, 'session', 'hit')).toBe(hits + 1)
      await admin.query('UPDATE sessions SET revoked_at = 1')
      await until('the revocation to reach A', async () => (await agents(a, fresh)).status === 401, 5_000)
    } finally {
      await admin.end()
    }
  })
})

describe('caches on SQLite', () => {
  let a: TestGateway | undefined
  let b: TestGateway | undefined
  afterEach(async () => {
    await b?.close()
    await a?.close()
    a = b = undefined
  })

  it('a write through the gateway’s own kysely db invalidates at once', async () => {
    a = await startTestGateway({ dialect: 'sqlite' })
    const token = await a.login(privateKeyToAccount(generatePrivateKey()))
    await agents(a, token)
    expect((await agents(a, token)).status).toBe(200)
    await a.database.db.insertInto('agent_revisions').values({ agent: 'analyst', revision: 7, instructions: 'i', model: 'm7', created_at: 1, wallet: null }).execute()
    expect((await agents(a, token)).body!.agents.find((x) => x.id === 'analyst')).toMatchObject({ revision: 7, model: 'm7' })
    await a.database.db.updateTable('sessions').set({ revoked_at: 1 }).execute()
    expect((await agents(a, token)).status).toBe(401)
  })

  it('a revocation by a second connection on the same file, or by a second gateway, is refused at the next request', async () => {
    a = await startTestGateway({ dialect: 'sqlite' })
    b = await startTestGateway({ databaseUrl: a.databaseUrl })
    const other = new SQLite(a.databaseUrl.slice('sqlite:'.length))
    try {
      for (let i = 0; i < 10; i++) {
        const token = await a.login(privateKeyToAccount(generatePrivateKey()))
        await agents(a, token)
        expect((await agents(a, token)).status).toBe(200) // cached
        if (i % 2 === 0) other.prepare('UPDATE sessions SET revoked_at = 1 WHERE revoked_at IS NULL').run()
        else expect((await logout(b!, token)).status).toBe(204)
        expect((await agents(a, token)).status).toBe(401)
      }
      const token = await a.login(privateKeyToAccount(generatePrivateKey()))
      await agents(a, token)
      other.prepare(`INSERT INTO agent_revisions (agent, revision, instructions, model, created_at) VALUES ('ceo', 9, 'i', 'm9', 1)`).run()
      expect((await agents(a, token)).body!.agents.find((x) => x.id === 'ceo')).toMatchObject({ revision: 9, model: 'm9' })
    } finally {
      other.close()
    }
  })
})
