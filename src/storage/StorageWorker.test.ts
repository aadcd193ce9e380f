import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../db/Database.js'
import { migrateToLatest } from '../db/migrateToLatest.js'
import { readX402Config } from '../x402/config.js'
import { readStorageConfig } from './config.js'
import { newDepositId, newUploadId } from './ids.js'
import { Ledger } from './Ledger.js'
import { StorageService } from './StorageService.js'
import { StorageWorker } from './StorageWorker.js'

describe('StorageWorker tick', () => {
  let dir: string
  let db: Kysely<Database>
  /** SQL of every statement run through `db`, in order. */
  let statements: string[]
  let ledger: Ledger
  let worker: StorageWorker

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'storage-worker-'))
    statements = []
    db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: new SQLite(':memory:') }),
      log: (event) => void statements.push(event.query.sql),
    })
    await migrateToLatest(db)
    ledger = new Ledger(db)
    // nothing listens on port 1: a retry fails at once (no upstream, no gateway)
    const env = { SERVICE_DATA_DIR: dir, SERVICE_PUBLIC_ORIGIN: 'http://127.0.0.1:1', SERVICE_STORAGE__UPLOAD_URL: 'http://127.0.0.1:1', SERVICE_STORAGE__PAYMENT_URL: 'http://127.0.0.1:1' }
    const service = new StorageService({ storage: readStorageConfig(env), x402: readX402Config(env), ledger, instanceId: 'me' })
    worker = new StorageWorker({ service, leaseS: 20, attestor: null })
    await worker.tick() // the first tick also requeues this identity's own uploads (once per start)
    statements.length = 0
  })

  afterEach(async () => {
    await db.destroy()
    rmSync(dir, { recursive: true, force: true })
  })

  it('on an idle ledger runs one read and no write', async () => {
    expect(await worker.tick()).toEqual({ retried: 0, verified: 0, attested: 0 })
    // before: the orphaned-claims read, four requeue UPDATEs (no row changed) and the due-retry and
    // due-verification reads, every tick
    expect(statements).toHaveLength(1)
    expect(statements[0]).toMatch(/^select /)
  })

  it('still takes over the upload of a dead instance when one is in flight', async () => {
    const depositId = newDepositId()
    const uploadId = newUploadId()
    await ledger.claimWithUpload(
      {
        depositId, payer: '0xpayer', nonce: '0x01', payTo: '0xpay', network: 'eip155:8453', asset: '0xasset', scheme: 'exact',
        amountAtomic: 5000n, priceAtomic: 5000n, priceUsd: '0.005', resourceUrl: 'http://x/store', paymentPayload: {},
        settled: { txHash: '0xtx', settlement: {} },
      },
      { uploadId, depositId, sha256: 'ab'.repeat(32), mimeType: 'text/plain', sizeBytes: 1n, appName: 'app', payerTag: 'tag', spoolPath: `db:${uploadId}`, owner: 'dead' },
      'uploading',
    )
    await db.updateTable('storage_uploads').set({ updated_at: Math.floor(Date.now() / 1000) - 60 }).where('upload_id', '=', uploadId).execute()
    statements.length = 0
    await worker.tick()
    // requeued from the dead instance, then retried here and queued again (its bytes are gone)
    const row = await ledger.getUploadRow(uploadId)
    expect(row).toMatchObject({ status: 'queued', owner_instance: null, attempts: 1 })
    expect(statements.filter((s) => s.startsWith('update "storage_uploads"')).length).toBeGreaterThan(1)
  })
})
