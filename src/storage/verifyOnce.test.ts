/**
 * Replicas on one database verify a stored item once: each verifier takes the item's verification (a lease on
 * its next check) before it asks the Arweave gateway, so two verifiers that read the same due row do not both
 * fetch it, and `storage.upload.verified` is appended once.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { CatalogueEvent, CatalogueEventInput, EventSink } from '../catalogue/EventSink.js'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { readX402Config } from '../x402/config.js'
import { readStorageConfig } from './config.js'
import { newDepositId, newUploadId } from './ids.js'
import { Ledger } from './Ledger.js'
import { storageTags } from './signDataItem.js'
import { StorageService } from './StorageService.js'
import { StorageWorker } from './StorageWorker.js'

const BYTES = Buffer.from('the stored bytes')
const SHA256 = createHash('sha256').update(BYTES).digest('hex')
const AR_TX_ID = 'A'.repeat(43)
const nowS = () => Math.floor(Date.now() / 1000)

/** An Arweave gateway that knows the item, answers after a pause (so both verifiers are in flight), and counts. */
async function startGateway(): Promise<{ server: Server; url: string; fetches: () => number }> {
  let fetches = 0
  const tags = Object.fromEntries(storageTags('app', SHA256, 'tag').map((t) => [`x-arweave-tag-${t.name}`, t.value]))
  const server = createServer((req, res) => {
    setTimeout(() => {
      if (req.url === `/tx/${AR_TX_ID}/status`) {
        fetches++
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ number_of_confirmations: 3 }))
      } else if (req.url === `/${AR_TX_ID}`) res.writeHead(200, tags).end(BYTES)
      else res.writeHead(404).end()
    }, 150)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, fetches: () => fetches }
}

describe.each(dialects)('two replicas verifying one stored upload (%s)', (dialect) => {
  let database: TestDatabase
  let second: DatabaseHandle
  let gateway: Awaited<ReturnType<typeof startGateway>>
  let dir: string
  const said: CatalogueEventInput[] = []
  const sink: EventSink = { emit: async (e) => (said.push(e), { ...e, event_id: String(said.length), actor: 'service.gateway', at: 0, severity: 'info', source_log: '' }) as CatalogueEvent }

  /** A replica: its own pool on the database, its own identity, one catalogue the two share. */
  const replica = (handle: DatabaseHandle, instanceId: string) => {
    const env = {
      SERVICE_DATA_DIR: dir,
      SERVICE_PUBLIC_ORIGIN: 'http://127.0.0.1:1',
      SERVICE_STORAGE__UPLOAD_URL: 'http://127.0.0.1:1',
      SERVICE_STORAGE__PAYMENT_URL: 'http://127.0.0.1:1',
      SERVICE_STORAGE__GATEWAY_URL: gateway.url,
    }
    const service = new StorageService({ storage: readStorageConfig(env), x402: readX402Config(env), ledger: new Ledger(handle.db), events: sink, instanceId })
    return new StorageWorker({ service, leaseS: 20, attestor: null })
  }

  /** A paid upload stored upstream whose verification is due. */
  async function storedUpload(ledger: Ledger): Promise<string> {
    const depositId = newDepositId()
    const uploadId = newUploadId()
    await ledger.claimWithUpload(
      {
        depositId, payer: '0xpayer', nonce: `0x${uploadId.slice(-8)}`, payTo: '0xpay', network: 'eip155:8453', asset: '0xasset', scheme: 'exact',
        amountAtomic: 5000n, priceAtomic: 5000n, priceUsd: '0.005', resourceUrl: 'http://x/store', paymentPayload: {},
        settled: { txHash: '0xtx', settlement: {} },
      },
      { uploadId, depositId, sha256: SHA256, mimeType: 'text/plain', sizeBytes: BigInt(BYTES.length), appName: 'app', payerTag: 'tag', spoolPath: `db:${uploadId}`, owner: 'a' },
      'uploading',
    )
    expect(await ledger.markStored(uploadId, AR_TX_ID, null, nowS() - 1, 'a')).toBe(true)
    return uploadId
  }

  beforeEach(async () => {
    said.length = 0
    dir = mkdtempSync(join(tmpdir(), 'verify-once-'))
    database = await createTestDatabase(dialect)
    second = await createDatabase({ url: database.url })
    gateway = await startGateway()
  })

  afterEach(async () => {
    await new Promise((r) => gateway.server.close(r))
    await second.close()
    await database.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('both read it due at once: one fetches it from the gateway and records it, one event; the other passes it by', async () => {
    const a = replica(database, 'a')
    const b = replica(second, 'b')
    const uploadId = await storedUpload(new Ledger(database.db))
    const [ta, tb] = await Promise.all([a.tick(), b.tick()])
    expect(ta.verified + tb.verified).toBe(1)
    expect(gateway.fetches()).toBe(1)
    expect(said.filter((e) => e.kind === 'storage.upload.verified')).toEqual([
      expect.objectContaining({ payload: expect.objectContaining({ upload_id: uploadId, ok: true, confirmations: 3 }) }),
    ])
    expect(await new Ledger(database.db).getUploadRow(uploadId)).toMatchObject({ status: 'verified', next_verify_at: null })
  })

  it('a verifier holds the item for half a minute at most: killed mid-way (a restart, kill -9), its item is due again soon, not minutes later', async () => {
    const ledger = new Ledger(database.db)
    const uploadId = await storedUpload(ledger)
    const before = nowS()
    const ticking = replica(database, 'a').tick()
    // the gateway answers after a pause: the take is visible while the verification is in flight
    let leaseUntil = 0
    for (let i = 0; i < 200 && leaseUntil <= before; i++) {
      leaseUntil = Number((await ledger.getUploadRow(uploadId))?.next_verify_at ?? 0)
      await new Promise((r) => setTimeout(r, 5))
    }
    expect(leaseUntil).toBeGreaterThan(before)
    expect(leaseUntil - before).toBeLessThanOrEqual(31)
    await ticking
  })

  it('a verifier that died mid-way holds it until its lease runs out; then another verifies it', async () => {
    const ledger = new Ledger(database.db)
    const uploadId = await storedUpload(ledger)
    expect(await ledger.takeVerification(uploadId, nowS() + 300)).toBe(true) // taken, never ended
    const b = replica(second, 'b')
    expect((await b.tick()).verified).toBe(0)
    expect(gateway.fetches()).toBe(0)
    await database.db.updateTable('storage_uploads').set({ next_verify_at: nowS() - 1 }).where('upload_id', '=', uploadId).execute()
    expect((await b.tick()).verified).toBe(1)
    expect(said.filter((e) => e.kind === 'storage.upload.verified')).toHaveLength(1)
  })
})
