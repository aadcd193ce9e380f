/**
 * A database that cannot serve (here SQLite refusing writes, as a full or read-only disk does) is not a bug of the
 * request: a request that needs it is answered 503 `database_unavailable` with `Retry-After`, as the document's
 * `5XX` declares, and the same request succeeds once the database is back. What the database refuses for cause (a
 * table that is not there) stays a 500 (tests/auth/credentialsOutage.test.ts).
 */
import { sql } from 'kysely'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'

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
    expect(during).toEqual({ status: 503, retryAfter: '5', body: { error: 'database_unavailable', message: 'The database is unavailable right now; retry shortly.' } })
    expect((await challenge(wallet)).status).toBe(200)
    expect(gw.validationErrors).toEqual([])
    expect(gw.logText()).toContain('database unavailable')
  })
})
