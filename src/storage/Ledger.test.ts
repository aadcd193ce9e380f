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

    it('takes over only a dead instance\'s uploads, once, and lets exactly one live instance claim each; a restarted instance requeues its own', async (t) => {
      if (!ctx) t.skip()
      const db = ledger.db
      const t0 = Math.floor(Date.now() / 1000)
      const tag = randomBytes(3).toString('hex')
      const [dead, live, other] = [`dead-${tag}`, `live-${tag}`, `other-${tag}`]
      const beat = (id: string, at: number) => ({ instance_id: id, host: 'h', pid: 1, started_at: at, heartbeat_at: at, stopped_at: null })
      await db.insertInto('gateway_instances').values([beat(dead, t0 - 100), beat(live, t0), beat(other, t0)]).execute()
      const held = async (owner: string, status: 'uploading' | 'pending_payment', settled: boolean) => {
        const d = claim('0x7', 'n-' + randomBytes(6).toString('hex'))
        const uploadId = newUploadId()
        await ledger.claimWithUpload(d, { uploadId, depositId: d.depositId, sha256: 'cc', mimeType: 'a/b', sizeBytes: 3n, appName: 'a', payerTag: '0x7', spoolPath: 'db:x', owner }, status)
        if (settled) await ledger.markSettled(d.depositId, '0x' + randomBytes(32).toString('hex'), {})
        await db.updateTable('storage_uploads').set({ updated_at: t0 - 100 }).where('upload_id', '=', uploadId).execute()
        return uploadId
      }
      const deadSending = await held(dead, 'uploading', true)
      const deadPaidNotActivated = await held(dead, 'pending_payment', true)
      const deadUnsettled = await held(dead, 'pending_payment', false)
      const liveSending = await held(other, 'uploading', true)
      // two live instances look at once: each orphan is requeued exactly once
      const counts = await Promise.all([ledger.requeueOrphaned(live, 20), ledger.requeueOrphaned(other, 20)])
      expect(counts[0]! + counts[1]!).toBe(2)
      const status = async (id: string) => (await ledger.getUploadRow(id))!
      expect((await status(deadSending)).status).toBe('queued')
      expect((await status(deadPaidNotActivated)).status).toBe('queued')
      expect((await status(deadUnsettled)).status).toBe('pending_payment') // settlement unknown: not uploaded
      expect(await status(liveSending)).toMatchObject({ status: 'uploading', owner_instance: other })
      // both race for it: exactly one holds it
      const takers = await Promise.all([ledger.takeQueued(deadSending, live), ledger.takeQueued(deadSending, other)])
      expect(takers.filter(Boolean)).toHaveLength(1)
      const winner = takers[0] ? live : other
      expect((await status(deadSending)).owner_instance).toBe(winner)
      // the dead instance wakes up: its late result is not recorded
      expect(await ledger.markStored(deadSending, 'Z'.repeat(43), null, 0, dead)).toBe(false)
      expect(await ledger.markStored(deadSending, 'Y'.repeat(43), null, 0, winner)).toBe(true)
      expect(await status(deadSending)).toMatchObject({ status: 'stored', ar_tx_id: 'Y'.repeat(43), owner_instance: null })
      // the dead instance's unsettled claim is a recovery candidate (for the chain to decide), once recorded
      // settled it is queued for upload
      const claims = await ledger.orphanedClaims(live, 20)
      expect(claims.map((c) => c.uploadId)).toContain(deadUnsettled)
      const candidate = claims.find((c) => c.uploadId === deadUnsettled)!
      expect(await ledger.recoverSettled(candidate.deposit.deposit_id, deadUnsettled, '0x' + randomBytes(32).toString('hex'), { recovered: true })).toBe(true)
      expect(await ledger.recoverSettled(candidate.deposit.deposit_id, deadUnsettled, null, {})).toBe(false) // once
      expect((await status(deadUnsettled)).status).toBe('queued')
      expect((await ledger.getDeposit(candidate.deposit.deposit_id))!.status).toBe('settled')
      // `other` restarts: what it held goes back to the queue at once
      expect(await ledger.requeueOwn(other)).toBe(1)
      expect(await status(liveSending)).toMatchObject({ status: 'queued', owner_instance: null })
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
