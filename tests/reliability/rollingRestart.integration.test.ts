/**
 * Rolling restarts, with real gateway processes on one PostgreSQL database and the EVM devnet
 * peers; every gateway validates its responses against the document (`SERVICE_HTTP__RESPONSE_VALIDATION=error`:
 * a response that breaks it would be a 500, counted as an error here).
 * - SIGTERM: `GET /health/ready` answers 503 `draining` at once — while a paid upload's body is still
 *   arriving (liveness stays 200) — that upload completes (200, stored), and the process exits 0.
 * - SIGTERM of one replica of two behind HAProxy (readiness checks every 250 ms) under steady load (paid uploads,
 *   login challenges, price quotes): no client sees an error.
 * - An upload the shutdown deadline cuts is handed over at the stop: a peer stores it at once, with a lease of
 *   10 minutes (only the hand-over can explain it).
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer as createHttpServer, request, type Server } from 'node:http'
import { type AddressInfo, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHaproxy } from '../../scripts/soak/haproxy.js'
import { spawnGateway, type SpawnedGateway } from '../support/spawnGateway.js'
import { createTestDatabase, type TestDatabase } from '../support/testDatabase.js'
import { evmEnv, type EvmPeers, multipart, payingClient, startEvmPeers } from '../storage/harness.js'

let peers: EvmPeers
let database: TestDatabase
let dir: string
let blackHole: Server
let blackHoleUrl: string
const spawned: SpawnedGateway[] = []

beforeAll(async () => {
  ;[peers, database] = await Promise.all([startEvmPeers(), createTestDatabase('postgres')])
  dir = await mkdtemp(join(tmpdir(), 'rolling-'))
  blackHole = createHttpServer((req) => req.resume()) // takes an upload's bytes, never answers
  await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r))
  blackHoleUrl = `http://127.0.0.1:${(blackHole.address() as AddressInfo).port}`
}, 180_000)

afterAll(async () => {
  await Promise.allSettled(spawned.map((g) => g.crash()))
  blackHole?.closeAllConnections()
  await new Promise((r) => blackHole?.close(r))
  await database?.close()
  await peers?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function start(name: string, extra: Record<string, string> = {}): Promise<SpawnedGateway> {
  const gateway = await spawnGateway({
    ...evmEnv(peers),
    SERVICE_DATABASE_URL: database.url,
    SERVICE_DATA_DIR: join(dir, name),
    SERVICE_INSTANCE_ID: name,
    SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9',
    SERVICE_HTTP__RESPONSE_VALIDATION: 'error',
    SERVICE_RATE_LIMIT__MAX: '100000',
    SERVICE_SHUTDOWN__DRAIN_DELAY_MS: '3000', // well past HAProxy's 2 failed checks 250 ms apart, on a loaded machine
    SERVICE_SHUTDOWN__QUIET_MS: '1000', // and then until HAProxy has stopped sending
    SERVICE_SHUTDOWN__DEADLINE_MS: '20000',
    ...extra,
  })
  spawned.push(gateway)
  return gateway
}

const exitCode = (g: SpawnedGateway) => new Promise<number | null>((resolve) => (g.child.exitCode !== null ? resolve(g.child.exitCode) : g.child.once('exit', (code) => resolve(code))))

async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const port = (s.address() as AddressInfo).port
  await new Promise((r) => s.close(r))
  return port
}

/** The paid `POST /store` of `data` through `url`: the 402, then the paid request (its answer). */
async function payHeaders(url: string, data: Uint8Array, payer: number): Promise<Record<string, string>> {
  const first = await fetch(`${url}/store`, { method: 'POST', body: multipart(data) })
  if (first.status !== 402) throw new Error(`quote answered ${first.status}: ${(await first.text()).slice(0, 300)}`)
  const client = payingClient(peers.base, payer)
  const payload = await client.createPaymentPayload(client.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json()))
  return client.encodePaymentSignatureHeader(payload)
}

describe('SIGTERM of one gateway', () => {
  it('fails readiness at once (503 draining; liveness 200), finishes a paid upload whose body is still arriving, exits 0', async () => {
    const g = await start('gw-term')
    // the replica's own phase (its model server here is down on purpose: this test is about the stop signal)
    expect(await (await fetch(`${g.url}/health/ready?require=none`)).json()).toMatchObject({ status: 'ready' })
    const data = randomBytes(256 * 1024)
    const headers = await payHeaders(g.url, data, 2)
    // the multipart body, sent by hand: half now, the rest after the signal
    const form = new Response(multipart(data))
    const contentType = form.headers.get('content-type')!
    const body = Buffer.from(await form.arrayBuffer())
    let answered = false
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${g.url}/store`, { method: 'POST', headers: { ...headers, 'content-type': contentType, 'content-length': String(body.length) } }, (res) => {
        let text = ''
        res.on('data', (c) => (text += c))
        res.on('end', () => {
          answered = true
          resolve({ status: res.statusCode!, text })
        })
      })
      req.on('error', reject)
      req.write(body.subarray(0, body.length / 2))
      setTimeout(() => req.end(body.subarray(body.length / 2)), 2500)
    })
    await new Promise((r) => setTimeout(r, 300))
    const exited = exitCode(g)
    const signalled = Date.now()
    g.child.kill('SIGTERM')
    // At once: readiness fails while the drain has work in flight (the upload's body is still arriving), so a
    // load balancer stops sending before the replica goes. Bounded by a generous wall-clock limit: on a loaded
    // machine the signal itself can take a while to be handled; what matters is the order.
    let ready: Response
    do ready = await fetch(`${g.url}/health/ready?require=none`)
    while (ready.status === 200 && Date.now() - signalled < 2_000)
    expect(ready.status).toBe(503)
    expect(answered).toBe(false)
    expect(await ready.json()).toMatchObject({ status: 'draining' })
    const live = await fetch(`${g.url}/health/live`)
    expect(live.status).toBe(200)
    expect(live.headers.get('connection')).toBe('close') // no request after this one on a connection about to close
    const stored = await answer
    expect(stored.status, stored.text).toBe(200)
    const sha256 = createHash('sha256').update(data).digest('hex')
    expect(await exited).toBe(0)
    expect(g.output()).toContain('"msg":"stopped"')
    const row = await database.db.selectFrom('storage_uploads').select(['status']).where('sha256', '=', sha256).executeTakeFirstOrThrow()
    expect(['stored', 'verified']).toContain(row.status)
  }, 180_000)
})

describe('SIGTERM of one replica of two behind HAProxy, under steady load', () => {
  it('gives no client-visible error: every paid upload 200, every challenge 200, every quote 200', async () => {
    const [a, b] = await Promise.all([start('gw-a'), start('gw-b')])
    const front = await freePort()
    const lb = await startHaproxy(dir, front, [a.port, b.port], 250)
    const url = `http://127.0.0.1:${front}`
    const errors: string[] = []
    const counts = { uploads: 0, challenges: 0, reads: 0 }
    let stop = false
    let signalledAt = 0
    const at = () => (signalledAt ? `${Date.now() - signalledAt} ms after SIGTERM` : 'before SIGTERM')
    const call = async (what: string, run: () => Promise<Response>, expected: number) => {
      try {
        const r = await run()
        const text = await r.text()
        if (r.status !== expected) errors.push(`${what} (${at()}): ${r.status} ${text.slice(0, 300)}`)
        return r.status === expected
      } catch (error) {
        errors.push(`${what} (${at()}): ${String(error)} ${String((error as Error).cause ?? '')}`)
        return false
      }
    }
    const uploader = async (payer: number) => {
      while (!stop) {
        const data = randomBytes(2048 + Math.floor(Math.random() * 8192))
        try {
          const headers = await payHeaders(url, data, payer)
          if (await call('paid upload', () => fetch(`${url}/store`, { method: 'POST', body: multipart(data), headers }), 200)) counts.uploads++
        } catch (error) {
          errors.push(`quote (${at()}): ${String(error)} ${String((error as Error).cause ?? '')}`)
        }
      }
    }
    const challenger = async () => {
      while (!stop) {
        const wallet = privateKeyToAccount(generatePrivateKey()).address
        if (await call('challenge', () => fetch(`${url}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet }) }), 200)) counts.challenges++
        if (await call('read', () => fetch(`${url}/store/quote?bytes=${1000 + counts.reads}`), 200)) counts.reads++
      }
    }
    const load = Promise.all([uploader(2), uploader(3), challenger(), challenger()])
    try {
      await new Promise((r) => setTimeout(r, 3000))
      const before = { ...counts }
      const exited = exitCode(a)
      signalledAt = Date.now()
      a.child.kill('SIGTERM')
      expect(await exited).toBe(0)
      await new Promise((r) => setTimeout(r, 1000)) // and on, on the survivor
      stop = true
      await load
      expect(errors).toEqual([])
      expect(counts.uploads).toBeGreaterThan(before.uploads)
      expect(counts.challenges).toBeGreaterThan(before.challenges)
      expect(a.output()).toContain('"msg":"stopped"')
    } finally {
      stop = true
      await load.catch(() => undefined)
      await lb.close()
      await b.stop()
    }
  }, 240_000)
})

describe('hand-over at the stop', () => {
  it('an upload the shutdown deadline cut is queued at the stop and stored by the peer at once (lease 10 min)', async () => {
    const long = { SERVICE_INSTANCE__LEASE_S: '600' }
    const c = await start('gw-c', { ...long, SERVICE_STORAGE__UPLOAD_URL: blackHoleUrl, SERVICE_SHUTDOWN__DRAIN_DELAY_MS: '0', SERVICE_SHUTDOWN__QUIET_MS: '0', SERVICE_SHUTDOWN__DEADLINE_MS: '1500' })
    const d = await start('gw-d', long)
    const data = randomBytes(20_000)
    const headers = await payHeaders(c.url, data, 4)
    void fetch(`${c.url}/store`, { method: 'POST', body: multipart(data), headers }).catch(() => undefined)
    const deadline = Date.now() + 60_000
    let held: { upload_id: string } | undefined
    while (!held && Date.now() < deadline) {
      held = await database.db.selectFrom('storage_uploads').select(['upload_id']).where('owner_instance', '=', 'gw-c').where('status', '=', 'uploading').executeTakeFirst()
      if (!held) await new Promise((r) => setTimeout(r, 200))
    }
    expect(held).toBeDefined()
    const exited = exitCode(c)
    c.child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(c.output()).toContain("handed this instance's in-flight paid uploads over to the queue at shutdown")
    const stoppedAt = Date.now()
    let status = ''
    while (!['stored', 'verified'].includes(status) && Date.now() - stoppedAt < 30_000) {
      await new Promise((r) => setTimeout(r, 200))
      status = (await database.db.selectFrom('storage_uploads').select(['status']).where('upload_id', '=', held!.upload_id).executeTakeFirstOrThrow()).status
    }
    expect(['stored', 'verified']).toContain(status)
    expect(Date.now() - stoppedAt).toBeLessThan(15_000)
    await d.stop()
  }, 180_000)
})
