/**
 * A database that cannot serve (here SQLite refusing writes, as a full or read-only disk does) is not a bug of the
 * request: a request that needs it is answered 503 `database_unavailable` with `Retry-After`, as the document's
 * `5XX` declares, and the same request succeeds once the database is back. What the database refuses for cause (a
 * table that is not there) stays a 500 (tests/auth/credentialsOutage.test.ts). A PostgreSQL that ends every
 * connection (a restart, a failover) does not end the gateway: the pool drops the dead connections and opens others;
 * one that cannot be reached at all (down, a network cut) is the same 503 until it can be again.
 */
import { sql } from 'kysely'
import { createConnection, createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { createTestDatabase, type TestDatabase } from '../support/testDatabase.js'

let gw: TestGateway
beforeAll(async () => {
  gw = await startTestGateway()
})
afterAll(async () => gw?.close())

const challenge = (wallet: string) => fetch(`${gw.url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet }) })

describe('a database that cannot serve', () => {
  it('answers 503 database_unavailable with Retry-After, and serves again once it is back', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey()).address
    await sql`PRAGMA query_only = ON`.execute(gw.database.db)
    let during: { status: number; retryAfter: string | null; body: unknown }
    try {
      const res = await challenge(wallet)
      during = { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }
    } finally {
      await sql`PRAGMA query_only = OFF`.execute(gw.database.db)
    }
    expect(during).toEqual({ status: 503, retryAfter: '5', body: { error: 'database_unavailable', message: 'The database is unavailable right now; retry shortly.', details: { retry_after_s: 5 } } })
    expect((await challenge(wallet)).status).toBe(200)
    expect(gw.validationErrors).toEqual([])
    expect(gw.logText()).toContain('database unavailable')
  })
})

describe('a PostgreSQL that drops every connection (a restart, a failover)', () => {
  let pgw: TestGateway
  beforeAll(async () => {
    pgw = await startTestGateway({ dialect: 'postgres' })
  })
  afterAll(async () => pgw?.close())

  // Without a listener on the pool, each idle connection's 57P01 is an unhandled `error` event: the gateway process
  // exits, and here vitest fails the run with it.
  it('the gateway lives on (its idle connections die with no crash) and serves on new connections', async () => {
    const ask = (wallet: string) => fetch(`${pgw.url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet }) })
    const wallets = Array.from({ length: 6 }, () => privateKeyToAccount(generatePrivateKey()).address)
    // several connections in the pool, idle now
    expect((await Promise.all(wallets.map(ask))).map((r) => r.status)).toEqual(wallets.map(() => 200))
    const admin = new pg.Client({ connectionString: pgw.databaseUrl })
    await admin.connect()
    try {
      // this gateway's connections only: the other test files share the server and its database
      const schema = new URL(pgw.databaseUrl).searchParams.get('application_name')
      expect(schema).toMatch(/^t_/)
      const { rowCount } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()', [schema])
      expect(rowCount).toBeGreaterThan(0)
    } finally {
      await admin.end()
    }
    await new Promise((r) => setTimeout(r, 200)) // the terminations reach the idle clients
    // each request is answered: at worst a 503 to retry, never a 500 or a dead process
    const after = await Promise.all(wallets.map(async (w) => (await ask(w)).status))
    for (const status of after) expect([200, 503]).toContain(status)
    expect((await ask(wallets[0]!)).status).toBe(200)
    expect(pgw.validationErrors).toEqual([])
  })
})

/** A TCP relay to the test PostgreSQL server that can go down (refusing and cutting connections) and come back. */
async function pgRelay(target: { hostname: string; port: number }) {
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let port = 0
  const up = async () => {
    server = createServer((client) => {
      const upstream = createConnection(target.port, target.hostname)
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on('close', () => sockets.delete(s))
        s.on('error', () => undefined)
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', r))
    port = (server.address() as { port: number }).port
  }
  const down = async () => {
    const closed = new Promise<void>((r) => server!.close(() => r()))
    for (const s of sockets) s.destroy()
    await closed
  }
  await up()
  return { port: () => port, up, down }
}

describe('a PostgreSQL that cannot be reached (down, or the network cut)', () => {
  let database: TestDatabase
  let relay: Awaited<ReturnType<typeof pgRelay>>
  let rgw: TestGateway
  beforeAll(async () => {
    database = await createTestDatabase('postgres')
    const url = new URL(database.url)
    relay = await pgRelay({ hostname: url.hostname, port: Number(url.port || 5432) })
    url.host = `127.0.0.1:${relay.port()}`
    rgw = await startTestGateway({ databaseUrl: url.toString() })
  })
  afterAll(async () => {
    await rgw?.close()
    await database?.close()
  })

  it('answers 503 database_unavailable while it is away (connections cut, then refused), and serves once it is back', async () => {
    const ask = async () => {
      const res = await fetch(`${rgw.url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: privateKeyToAccount(generatePrivateKey()).address }) })
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error?: string } }
    }
    expect((await ask()).status).toBe(200)
    await relay.down()
    await new Promise((r) => setTimeout(r, 200)) // the cut reaches the idle connections
    for (let i = 0; i < 3; i++) {
      const during = await ask()
      expect(during, JSON.stringify(during)).toMatchObject({ status: 503, retryAfter: '5', body: { error: 'database_unavailable' } })
    }
    await relay.up()
    expect((await ask()).status).toBe(200)
    expect(rgw.validationErrors).toEqual([])
    expect(rgw.logText()).toContain('database unavailable')
    expect(rgw.logText()).not.toContain('unhandled error')
  })
})
