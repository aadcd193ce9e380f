/**
 * Prompt recovery of paid uploads across gateway processes on one PostgreSQL database:
 * - instance A is killed (`kill -9`) while sending two settled uploads (one small, spooled in the database; one
 *   6 MB, in the shared spool directory); instance B, alive, stores both within 30 s (A's lease lapses, B
 *   claims each once);
 * - an instance killed mid-upload and restarted under the same identity re-queues its own work at once (its
 *   lease is set to 10 minutes here, so nothing but the restart can explain the upload being stored).
 * Real processes (`src/main.ts` through `spawnGateway`); the upstream A sends to accepts the bytes and never
 * answers, so A is mid-upload, after settlement, when it dies.
 */
import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { spawnGateway, type SpawnedGateway } from '../support/spawnGateway.js'
import { useReplicaPeers } from '../support/replicaPeers.js'
import { waitFor as waitUntil } from '../support/waitFor.js'
import { evmEnv, multipart, payingClient } from '../storage/harness.js'

const r = useReplicaPeers('takeover-')

function gatewayEnv(name: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...evmEnv(r.peers),
    SERVICE_DATABASE_URL: r.database.url,
    SERVICE_DATA_DIR: join(r.dir, name),
    SERVICE_INSTANCE_ID: name,
    // the mounted-directory configuration; without a mount, tests/reliability/sharedSpool…
    SERVICE_STORAGE__SPOOL_STORE: 'local',
    SERVICE_STORAGE__SHARED_SPOOL_DIR: join(r.dir, 'shared-spool'),
    SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9',
    ...extra,
  }
}

async function start(name: string, extra: Record<string, string> = {}): Promise<SpawnedGateway> {
  const gateway = await spawnGateway(gatewayEnv(name, extra))
  r.spawned.push(gateway)
  return gateway
}

/** Quotes and pays `data` through `gateway` without waiting for the answer (it may never come). */
async function payInBackground(gateway: SpawnedGateway, data: Uint8Array, payer: number): Promise<void> {
  const first = await fetch(`${gateway.url}/store`, { method: 'POST', body: multipart(data) })
  expect(first.status).toBe(402)
  const client = payingClient(r.peers.base, payer)
  const required = client.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
  const payload = await client.createPaymentPayload(required)
  void fetch(`${gateway.url}/store`, { method: 'POST', body: multipart(data), headers: client.encodePaymentSignatureHeader(payload) }).catch(() => undefined)
}

/** `waitFor` that reports the uploads as they stood when it timed out. */
const waitFor = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number) => waitUntil(what, probe, timeoutMs, uploads)

type Row = { upload_id: string; status: string; owner_instance: string | null; spool_path: string | null; sha256: string; deposit: string }

async function uploads(): Promise<Row[]> {
  return r.database.db
    .selectFrom('storage_uploads')
    .innerJoin('storage_deposits', 'storage_deposits.deposit_id', 'storage_uploads.deposit_id')
    .select(['upload_id', 'storage_uploads.status', 'owner_instance', 'spool_path', 'sha256', 'storage_deposits.status as deposit'])
    .execute()
}


const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

describe('paid uploads of a dead instance (two gateways, one PostgreSQL r.database)', () => {
  it('are stored by the live instance within 30 s of a kill -9 right after settlement, each exactly once', async () => {
    const [a, b] = await Promise.all([start('gw-a', { SERVICE_STORAGE__UPLOAD_URL: r.blackHoleUrl }), start('gw-b')])
    const small = randomBytes(5_000)
    const large = randomBytes(6 * 1024 * 1024)
    await Promise.all([payInBackground(a, small, 2), payInBackground(a, large, 3)])
    // both settled, both held by A, mid-upload
    const held = await waitFor(
      'two settled uploads held by gw-a',
      async () => {
        const rows = await uploads()
        return rows.length === 2 && rows.every((r) => r.deposit === 'settled' && r.status === 'uploading' && r.owner_instance === 'gw-a') ? rows : undefined
      },
      60_000,
    )
    expect(held.map((r) => r.spool_path!.split(':')[0]).sort()).toEqual(['db', 'shared'])
    await a.crash()
    const killedAt = Date.now()
    const stored = await waitFor(
      'both uploads stored',
      async () => {
        const rows = await uploads()
        return rows.every((r) => r.status === 'stored' || r.status === 'verified') ? rows : undefined
      },
      45_000,
    )
    const elapsed = Date.now() - killedAt
    expect(elapsed).toBeLessThan(30_000)
    expect(stored).toHaveLength(2)
    expect(b.output()).toContain('took over paid uploads of a dead instance')
    // exactly one deposit per payment, each settled once; nothing left in the spool
    const deposits = await r.database.db.selectFrom('storage_deposits').select(['tx_hash', 'status']).execute()
    expect(deposits).toHaveLength(2)
    expect(new Set(deposits.map((d) => d.tx_hash)).size).toBe(2)
    expect(await r.database.db.selectFrom('storage_spool').select('upload_id').execute()).toEqual([])
    // the stored items are what was paid for: B reports the same sha256 over its status endpoint
    for (const row of stored) {
      const res = await fetch(`${b.url}/store/uploads/${row.upload_id}`)
      expect(res.status).toBe(200)
      const body = (await res.json()) as { sha256: string; ar_tx_id: string }
      expect([sha(small), sha(large)]).toContain(body.sha256)
      expect(body.ar_tx_id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    }
    await b.stop()
  }, 240_000)

  it('are re-queued at once by the same instance restarting (lease of 10 min: only the restart can explain it)', async () => {
    const long = { SERVICE_INSTANCE__LEASE_S: '600' }
    const c = await start('gw-c', { ...long, SERVICE_STORAGE__UPLOAD_URL: r.blackHoleUrl })
    const data = randomBytes(20_000)
    const before = new Set((await uploads()).map((r) => r.upload_id))
    await payInBackground(c, data, 4)
    const mine = await waitFor(
      'a settled upload held by gw-c',
      async () => (await uploads()).find((r) => !before.has(r.upload_id) && r.deposit === 'settled' && r.status === 'uploading' && r.owner_instance === 'gw-c'),
      60_000,
    )
    await c.crash()
    const again = await start('gw-c', long) // same identity, now with a working upstream
    const stored = await waitFor(
      'the upload stored after the restart',
      async () => (await uploads()).find((r) => r.upload_id === mine.upload_id && (r.status === 'stored' || r.status === 'verified')),
      30_000,
    )
    expect(stored.sha256).toBe(sha(data))
    expect(again.output()).toContain("requeued this instance's in-flight paid uploads after a restart")
    await again.stop()
  }, 240_000)
})
