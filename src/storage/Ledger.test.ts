import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { newDepositId, newUploadId } from './ids.js'
import { Ledger } from './Ledger.js'

const PG_ADMIN = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

async function pgAvailable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: PG_ADMIN, connectionTimeoutMillis: 1000 })
  try {
    await c.connect()
    await c.end()
    return true
  } catch {
    return false
  }
}

const claim = (payer: string, nonce: string, txHash?: string) => ({
  depositId: newDepositId(), payer, nonce, payTo: '0xpay', network: 'eip155:8453', asset: '0xasset', scheme: 'exact',
  amountAtomic: 5000n, priceAtomic: 5000n, priceUsd: '0.005', resourceUrl: 'http://x/store', paymentPayload: { a: 1n },
  ...(txHash ? { settled: { txHash, settlement: {} } } : {}),
})

function suite(name: string, open: () => Promise<{ handle: DatabaseHandle; drop: () => Promise<void> } | undefined>) {
  describe(`Ledger on ${name}`, () => {
    let ctx: { handle: DatabaseHandle; drop: () => Promise<void> } | undefined
    let ledger: Ledger
    beforeAll(async () => {
      ctx = await open()
      if (ctx) ledger = new Ledger(ctx.handle.db)
    })
    afterAll(async () => ctx?.drop())

    it('lets exactly one of 50 concurrent claims of one (payer, nonce) win', async (t) => {
      if (!ctx) t.skip()
      const nonce = '0x' + randomBytes(32).toString('hex')
      const results = await Promise.all(Array.from({ length: 50 }, () => ledger.claimDeposit(claim('0xAbC', nonce))))
      expect(results.filter(Boolean)).toHaveLength(1)
      const rows = await ledger.db.selectFrom('storage_deposits').selectAll().where('nonce', '=', nonce).execute()
      expect(rows).toHaveLength(1)
      expect(rows[0]!.payer).toBe('0xabc')
      expect(rows[0]!.amount_atomic).toBe('5000')
    })

    it('keeps an Algorand payer as written (base32, upper case); EVM payers are lower-cased', async (t) => {
      if (!ctx) t.skip()
      const algo = 'TEBIP2BXCP75UTGVFO4W3FWLGOBBSSH6LEACRCKQBDW7XQU7IPE2LJYYKM'
      const c = { ...claim(algo, 'ALGOTXID' + randomBytes(4).toString('hex')), network: 'algorand:x' }
      expect(await ledger.claimDeposit(c)).toBe(true)
      expect((await ledger.getDeposit(c.depositId))!.payer).toBe(algo)
    })

    it('records a settlement tx hash at most once and releases refused claims', async (t) => {
      if (!ctx) t.skip()
      const a = claim('0x1', '0x' + randomBytes(32).toString('hex'))
      const b = claim('0x1', '0x' + randomBytes(32).toString('hex'))
      expect(await ledger.claimDeposit(a)).toBe(true)
      expect(await ledger.claimDeposit(b)).toBe(true)
      const tx = '0x' + randomBytes(32).toString('hex')
      expect(await ledger.markSettled(a.depositId, tx, { ok: 1 })).toBe(true)
      expect(await ledger.markSettled(b.depositId, tx, { ok: 2 })).toBe(false)
      expect((await ledger.getDeposit(b.depositId))!.tx_hash).toBeNull()
      const c = claim('0x2', 'n-' + randomBytes(4).toString('hex'))
      await ledger.claimDeposit(c)
      await ledger.dropUnpaid(c.depositId, 'upl_none')
      expect(await ledger.getDeposit(c.depositId)).toBeUndefined()
      expect(await ledger.claimDeposit({ ...c, depositId: newDepositId() })).toBe(true)
      // a final (Algorand) claim whose tx hash is known is refused as a replay
      expect(await ledger.claimDeposit(claim('0x3', 'other', tx))).toBe(false)
    })

    it('moves an upload through queued → uploading → stored → verified, one taker at a time', async (t) => {
      if (!ctx) t.skip()
      const d = claim('0x4', 'n-' + randomBytes(4).toString('hex'))
      await ledger.claimDeposit(d)
      const uploadId = newUploadId()
      await ledger.createUpload({ uploadId, depositId: d.depositId, sha256: 'aa', mimeType: 'text/plain', sizeBytes: 3n, appName: 'a', payerTag: '', spoolPath: '/tmp/x' })
      await ledger.markQueued(uploadId, 'boom', 0)
      expect((await ledger.dueQueued(100)).map((u) => u.upload_id)).toContain(uploadId)
      const takers = await Promise.all([ledger.takeQueued(uploadId), ledger.takeQueued(uploadId), ledger.takeQueued(uploadId)])
      expect(takers.filter(Boolean)).toHaveLength(1)
      await ledger.markStored(uploadId, 'A'.repeat(43), '123', 0)
      expect((await ledger.dueVerification(100)).map((u) => u.upload_id)).toContain(uploadId)
      await ledger.recordVerification(uploadId, true, null)
      const got = await ledger.getUpload(uploadId)
      expect(got!.upload).toMatchObject({ status: 'verified', ar_tx_id: 'A'.repeat(43), winc: '123', spool_path: null, attempts: 2 })
      expect(got!.deposit.deposit_id).toBe(d.depositId)
    })

    it('recovers after a crash: settled-but-pending uploads and orphaned uploading ones go back to the queue', async (t) => {
      if (!ctx) t.skip()
      const d = claim('0x5', 'n-' + randomBytes(4).toString('hex'))
      const uploadId = newUploadId()
      const upload = { uploadId, depositId: d.depositId, sha256: 'bb', mimeType: 'text/plain', sizeBytes: 5n, appName: 'a', payerTag: '0x5', spoolPath: '/tmp/y' }
      expect(await ledger.claimWithUpload(d, upload, 'pending_payment')).toBe(true)
      // a replay of the same (payer, nonce) records neither a deposit nor an upload
      expect(await ledger.claimWithUpload({ ...d, depositId: newDepositId() }, { ...upload, uploadId: newUploadId() }, 'pending_payment')).toBe(false)
      await ledger.requeueStale(-10)
      expect((await ledger.getUploadRow(uploadId))!.status).toBe('pending_payment') // not settled: left alone
      await ledger.markSettled(d.depositId, '0x' + randomBytes(32).toString('hex'), {})
      await ledger.requeueStale(-10) // the process died before activating the upload
      expect((await ledger.getUploadRow(uploadId))!.status).toBe('queued')
      await ledger.takeQueued(uploadId)
      await ledger.requeueStale(-10) // and died again mid-upload
      expect((await ledger.getUploadRow(uploadId))!.status).toBe('queued')
      const e = claim('0x6', 'n-' + randomBytes(4).toString('hex'))
      const other = newUploadId()
      await ledger.claimWithUpload(e, { ...upload, uploadId: other, depositId: e.depositId }, 'pending_payment')
      await ledger.dropUnpaid(e.depositId, other)
      expect(await ledger.getUploadRow(other)).toBeUndefined()
      expect(await ledger.getDeposit(e.depositId)).toBeUndefined()
    })
  })
}

suite('SQLite', async () => {
  const handle = await createDatabase({ url: ':memory:' })
  return { handle, drop: () => handle.close() }
})

suite('PostgreSQL', async () => {
  if (!(await pgAvailable())) {
    // Outside CI a machine without PostgreSQL skips these; CI (.ci/run starts it) must never skip them.
    if (process.env.CI) throw new Error(`PostgreSQL is required in CI (${PG_ADMIN})`)
    return undefined
  }
  const name = `storage_ledger_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_ADMIN })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = PG_ADMIN.replace(/\/[^/]*$/, `/${name}`)
  const handle = await createDatabase({ url })
  return {
    handle,
    drop: async () => {
      await handle.close()
      const a = new pg.Client({ connectionString: PG_ADMIN })
      await a.connect()
      await a.query(`DROP DATABASE IF EXISTS ${name}`)
      await a.end()
    },
  }
})
