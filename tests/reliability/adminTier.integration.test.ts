/**
 * The admin tier across replicas: gateway processes (`src/main.ts` through `spawnGateway`), each with its
 * own data directory, on one PostgreSQL database (a database of its own, created here and dropped after).
 * - a cabinet provisioned through A is read (roster, preflight) and signs through B; cleared through B, gone on A;
 *   both replicas' registry files follow the database;
 * - unlock through A unlocks B, and a third replica started afterwards; preflight counts the unlocked replicas;
 * - stopping every replica locks the deployment (a restarted replica is locked);
 * - attackers with write access to the database but without the data key: a forged, moved or tampered key
 *   wrap is refused (the replica stays locked), a "replica" whose published key lacks the MAC is sent nothing;
 *   the database never holds the data key or the unlock signature in the clear; no log line does either.
 * Every response is checked against openapi/gateway.yaml by the gateways themselves
 * (`SERVICE_HTTP__RESPONSE_VALIDATION=error`: a response off the document would be a 500).
 */
import { createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { recoverMessageAddress, type Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/Database.js'
import { generatePeerKeyPair, wrapForPeer } from '../../src/vault/peerKeyWrap.js'
import { unlockMessageFor } from '../../src/vault/Vault.js'
import { testOverlord } from '../support/shadowFixtures.js'
import { spawnGateway, type SpawnedGateway } from '../support/spawnGateway.js'
import { testPostgresUrl } from '../support/testDatabase.js'

const overlord = testOverlord()
const origin = 'http://admin-tier.test'
const unlockMessage = unlockMessageFor(origin)
let unlockSignature: Hex
let dbName: string
let dbUrl: string
let db: Kysely<Database>
let dir: string
const spawned: SpawnedGateway[] = []

beforeAll(async () => {
  dbName = `i28_admin_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: testPostgresUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${dbName}"`)
  await admin.end()
  const url = new URL(testPostgresUrl)
  url.pathname = `/${dbName}`
  dbUrl = url.toString()
  const pool = new pg.Pool({ connectionString: dbUrl, max: 2 })
  // `DROP DATABASE … WITH (FORCE)` in afterAll terminates (57P01) a connection of this pool that is still closing
  // after `destroy()`; without a listener the pool's 'error' became an unhandled error of the run (seen in CI)
  pool.on('error', (error: Error & { code?: string }) => {
    if (error.code !== '57P01') throw error
  })
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  dir = await mkdtemp(join(tmpdir(), 'admin-tier-'))
  unlockSignature = await overlord.account.signMessage({ message: unlockMessage })
}, 60_000)

afterAll(async () => {
  await Promise.allSettled(spawned.map((g) => g.crash()))
  await db?.destroy()
  const admin = new pg.Client({ connectionString: testPostgresUrl })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)
  await admin.end()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function start(name: string): Promise<SpawnedGateway> {
  const gateway = await spawnGateway({
    SERVICE_DATABASE_URL: dbUrl,
    SERVICE_DATA_DIR: join(dir, name),
    SERVICE_INSTANCE_ID: name,
    SERVICE_INSTANCE__HEARTBEAT_MS: '250',
    SERVICE_INSTANCE__LEASE_S: '3',
    SERVICE_PUBLIC_ORIGIN: origin,
    SERVICE_HTTP__RESPONSE_VALIDATION: 'error',
    SERVICE_RATE_LIMIT__MAX: '100000',
    SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9',
    SHADOW_OVERLORD_ADDRESS: overlord.account.address,
    SHADOW_JWT_SECRET: overlord.jwtSecretHex,
  }, { timeoutMs: 240_000 }) // a start through tsx (no up-to-date build) is slow on a loaded 2-core machine
  spawned.push(gateway)
  return gateway
}

type Reply = { status: number; body: any }
async function call(g: SpawnedGateway, method: string, path: string, body?: unknown, bearer?: string): Promise<Reply> {
  const res = await fetch(`${g.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

/** A fresh challenge of `scope` through `g`, signed by the overlord. */
async function signed(g: SpawnedGateway, scope: string, params: Record<string, string> = {}): Promise<{ nonce: string; signature: Hex }> {
  const challenge = await call(g, 'POST', '/admin/shadow/challenge', { scope, params })
  expect(challenge.status).toBe(200)
  return { nonce: challenge.body.nonce, signature: await overlord.account.signMessage({ message: challenge.body.message }) }
}

async function bearerOf(g: SpawnedGateway): Promise<string> {
  const verified = await call(g, 'POST', '/admin/shadow/verify', await signed(g, 'auth'))
  expect(verified.status).toBe(200)
  return verified.body.jwt
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const preflight = async (g: SpawnedGateway, bearer: string, co = 'ACME') => {
  const r = await call(g, 'GET', `/admin/cabinet/${co}/preflight`, undefined, bearer)
  expect(r.status).toBe(200)
  return r.body as { exists: boolean; vault_unlocked: boolean; soldiers_with_address: number; replicas_live: number; replicas_unlocked: number }
}

/** The data key, recovered the way only the overlord can: from the unlock signature and the vault header. */
async function dataKeyFromSignature(): Promise<Buffer> {
  const meta = (await db.selectFrom('vault_meta').selectAll().executeTakeFirstOrThrow())
  const kek = Buffer.from(hkdfSync('sha256', Buffer.from(unlockSignature.slice(2, 130), 'hex'), Buffer.from(meta.kdf_salt, 'hex'), 'svc-vault/v1 kek', 32))
  const sealed = Buffer.from(meta.wrapped_ciphertext, 'hex')
  const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(meta.wrapped_nonce, 'hex')).setAAD(Buffer.from('svc-vault/v1 data-key'))
  decipher.setAuthTag(sealed.subarray(sealed.length - 16))
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()])
}

/** Every row of every table of the database as text (bytea as hex). */
async function dump(): Promise<string> {
  const client = new pg.Client({ connectionString: dbUrl })
  await client.connect()
  try {
    const tables = await client.query<{ table_name: string }>(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
    const parts: string[] = []
    for (const { table_name } of tables.rows) parts.push(JSON.stringify((await client.query(`SELECT * FROM "${table_name}"`)).rows, (_k, v) => (v?.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v)))
    return parts.join('\n').toLowerCase()
  } finally {
    await client.end()
  }
}

const forms = (bytes: Buffer) => [bytes.toString('hex'), bytes.toString('base64'), bytes.toString('base64url')].map((s) => s.toLowerCase())

describe('the admin tier on one PostgreSQL database, two replicas with their own data directories', () => {
  let a: SpawnedGateway
  let b: SpawnedGateway
  let bearer: string

  it('unlock through A unlocks B; a cabinet provisioned through A is read and signs through B; clear through B is gone on A', async () => {
    ;[a, b] = await Promise.all([start('gw-a'), start('gw-b')])
    bearer = await bearerOf(a)
    expect(await preflight(b, bearer)).toMatchObject({ exists: false, vault_unlocked: false, replicas_live: 2, replicas_unlocked: 0 })
    const unlocked = await call(a, 'POST', '/vault/credentials/reunlock', { address: overlord.account.address, signature: unlockSignature, message: unlockMessage }, bearer)
    expect(unlocked.status).toBe(200)
    const unlockedAt = Date.now()
    await waitFor('B unlocked by A', async () => ((await preflight(b, bearer)).vault_unlocked ? true : undefined))
    console.log(`B unlocked ${Date.now() - unlockedAt} ms after A (heartbeat 250 ms, loaded machine)`)
    expect(await preflight(b, bearer)).toMatchObject({ vault_unlocked: true, replicas_live: 2, replicas_unlocked: 2 })
    expect(await db.selectFrom('vault_key_wraps').select('recipient_instance').execute()).toEqual([]) // picked up and deleted

    const provisioned = await call(a, 'POST', '/admin/cabinet/ACME/provision', await signed(a, 'cabinet.provision', { company: 'ACME' }), bearer)
    expect(provisioned.status).toBe(200)
    const roster = await call(b, 'GET', '/cabinet/ACME')
    expect(roster.status).toBe(200)
    expect(roster.body.members.map((m: { address: string }) => m.address)).toEqual([provisioned.body.ceo, ...provisioned.body.soldiers].map((m) => m.address))
    expect(await preflight(b, bearer)).toMatchObject({ exists: true, vault_unlocked: true, soldiers_with_address: 7 })
    const cfo = roster.body.members.find((m: { role: string }) => m.role === 'cfo_finance')
    const message = 'pay 10 USDC to the supplier'
    const digest = `0x${Buffer.from(await crypto.subtle.digest('SHA-256', Buffer.from(message))).toString('hex')}`
    const sign = await call(b, 'POST', `/vault/sign/${encodeURIComponent(cfo.entity_id)}`, { ...(await signed(b, 'vault.sign', { agent_id: cfo.entity_id, message_sha256: digest })), message }, bearer)
    expect(sign.status).toBe(200)
    expect(await recoverMessageAddress({ message, signature: sign.body.signature })).toBe(cfo.address)
    // both replicas' exported registry files follow the database
    for (const name of ['gw-a', 'gw-b']) {
      await waitFor(`${name}'s registry file`, async () => {
        const text = await readFile(join(dir, name, 'cabinet_registry.json'), 'utf8').catch(() => '')
        return text.includes(cfo.address) ? true : undefined
      })
    }

    const cleared = await call(b, 'POST', '/admin/cabinet/ACME/clear', { ...(await signed(b, 'cabinet.clear', { company: 'ACME', confirm: 'DESTROY-ACME-CABINET' })), confirm: 'DESTROY-ACME-CABINET' }, bearer)
    expect(cleared.status).toBe(200)
    expect(cleared.body.vault_entries_deleted).toBe(16)
    expect((await call(a, 'GET', '/cabinet/ACME')).status).toBe(404)
    expect(await preflight(a, bearer)).toMatchObject({ exists: false, soldiers_with_address: 0 })
    const signGone = await call(a, 'POST', `/vault/sign/${encodeURIComponent(cfo.entity_id)}`, { ...(await signed(a, 'vault.sign', { agent_id: cfo.entity_id, message_sha256: digest })), message }, bearer)
    expect(signGone.status).toBe(404)
    await waitFor("gw-a's registry file without ACME", async () => {
      const text = await readFile(join(dir, 'gw-a', 'cabinet_registry.json'), 'utf8').catch(() => '')
      return JSON.parse(text || '{}').companies && !text.includes('ACME') ? true : undefined
    })
  }, 600_000)

  it('a replica started while one is unlocked comes up unlocked; a forged replica key gets no wrap', async () => {
    // someone with database access alone registers a "replica" with a key of their own: no valid MAC
    const fake = generatePeerKeyPair()
    const now = Math.floor(Date.now() / 1000)
    await db
      .insertInto('gateway_instances')
      .values({ instance_id: 'gw-fake', host: 'x', pid: 1, started_at: now, heartbeat_at: now + 600, stopped_at: null, unlock_public_key: fake.publicKey, unlock_key_mac: 'ab'.repeat(32), vault_unlocked: 0 })
      .execute()
    const c = await start('gw-c')
    await waitFor('C unlocked by a peer', async () => ((await preflight(c, bearer)).vault_unlocked ? true : undefined))
    expect(await preflight(c, bearer)).toMatchObject({ replicas_unlocked: 3 })
    expect(await db.selectFrom('vault_key_wraps').select('recipient_instance').where('recipient_instance', '=', 'gw-fake').execute()).toEqual([])
    expect(a.output() + b.output()).toContain('without a valid MAC gets no wrap')
    await db.deleteFrom('gateway_instances').where('instance_id', '=', 'gw-fake').execute()
    await c.stop()
  }, 400_000)

  it('neither the data key nor the unlock signature is ever in the database or a log line', async () => {
    const dataKey = await dataKeyFromSignature()
    const text = await dump()
    const secrets = [...forms(dataKey), ...forms(Buffer.from(unlockSignature.slice(2, 130), 'hex'))]
    for (const secret of secrets) expect(text.includes(secret)).toBe(false)
    // the check is able to fail: the dump does hold the sealed header
    expect(text).toContain((await db.selectFrom('vault_meta').select('wrapped_ciphertext').executeTakeFirstOrThrow()).wrapped_ciphertext)
    const logs = spawned.map((g) => g.output().toLowerCase()).join('\n')
    for (const secret of secrets) expect(logs.includes(secret)).toBe(false)
    expect(logs).not.toMatch(/private[_ ]?key"?\s*[:=]/)
  })

  it('stopping every replica locks the deployment; forged, moved and tampered wraps are refused, a genuine one unlocks', async () => {
    const dataKey = await dataKeyFromSignature()
    await Promise.all([a.stop(), b.stop()])
    expect(await db.selectFrom('vault_key_wraps').select('recipient_instance').execute()).toEqual([])
    a = await start('gw-a') // restarted: no live unlocked peer
    await new Promise((r) => setTimeout(r, 1_500))
    expect(await preflight(a, bearer)).toMatchObject({ vault_unlocked: false, replicas_live: 1, replicas_unlocked: 0 })
    const row = await waitFor('A publishes its key', async () => {
      const r = await db.selectFrom('gateway_instances').select(['unlock_public_key']).where('instance_id', '=', 'gw-a').executeTakeFirst()
      return r?.unlock_public_key ?? undefined
    })
    const insert = async (wrap: ReturnType<typeof wrapForPeer>) => {
      await db.insertInto('vault_key_wraps').values({ ...wrap, created_at: Math.floor(Date.now() / 1000) }).execute()
      await waitFor('the wrap consumed', async () => ((await db.selectFrom('vault_key_wraps').select('nonce').where('nonce', '=', wrap.nonce).execute()).length === 0 ? true : undefined))
    }
    // 1. an attacker's own key, correctly sealed to A's published key: does not match the vault's commitment
    await insert(wrapForPeer({ dataKey: randomBytes(32), sender: 'gw-b', recipient: 'gw-a', recipientPublicKey: row }))
    // 2. a genuine wrap for another replica, moved to A's row
    const other = generatePeerKeyPair()
    const forOther = wrapForPeer({ dataKey, sender: 'gw-b', recipient: 'gw-z', recipientPublicKey: other.publicKey })
    await insert({ ...forOther, recipient_instance: 'gw-a', recipient_public_key: row })
    // 3. a genuine wrap for A with one ciphertext byte changed
    const genuine = wrapForPeer({ dataKey, sender: 'gw-b', recipient: 'gw-a', recipientPublicKey: row })
    const bytes = Buffer.from(genuine.ciphertext, 'hex')
    bytes[0]! ^= 0x80
    await insert({ ...genuine, ciphertext: bytes.toString('hex') })
    expect(await preflight(a, bearer)).toMatchObject({ vault_unlocked: false, replicas_unlocked: 0 })
    expect(a.output().match(/refused a key wrap/g)).toHaveLength(3)
    // the checks are what refused them: the same wrap untampered unlocks A
    await insert(wrapForPeer({ dataKey, sender: 'gw-b', recipient: 'gw-a', recipientPublicKey: row }))
    await waitFor('A unlocked by the genuine wrap', async () => ((await preflight(a, bearer)).vault_unlocked ? true : undefined))
    await a.stop()
  }, 400_000)
})

