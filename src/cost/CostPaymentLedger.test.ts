import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, type DatabaseHandle } from '../db/createDatabase.js'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { Ledger } from '../storage/Ledger.js'
import { type CostPaymentClaim, CostPaymentLedger } from './CostPaymentLedger.js'

const claim = (paymentId: string, nonce = '0x' + 'ab'.repeat(32)): CostPaymentClaim => ({
  paymentId,
  payer: '0xCC6Ea14Df3d24fEbEAf620cD8D6ae0e680447f93',
  nonce,
  wallet: '0x1111111111111111111111111111111111111111',
  route: 'llmChat',
  network: 'eip155:8453',
  asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
  payTo: '0x52908400098527886E0F7030069857D2E4169EE7',
  amountAtomic: 1_000n,
  priceAtomic: 1_000n,
  paymentPayload: { x402Version: 2 },
})

// Two gateway instances share one database: each has its own connection (pool) and its own ledger.
describe.each(dialects)('cost payment claims across two instances (%s)', (dialect) => {
  let db: TestDatabase
  let second: DatabaseHandle
  let a: CostPaymentLedger
  let b: CostPaymentLedger
  beforeAll(async () => {
    db = await createTestDatabase(dialect)
    second = await createDatabase({ url: db.url })
    a = new CostPaymentLedger(db.db, () => 1_795_400_000)
    b = new CostPaymentLedger(second.db, () => 1_795_400_000)
  })
  afterAll(async () => {
    await second?.close()
    await db?.close()
  })

  it('30 concurrent claims of one (payer, nonce) split over both instances: exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).claim(claim(`pay_${String(i).padStart(26, '0')}`))))
    expect(results.filter(Boolean)).toHaveLength(1)
    expect(await db.db.selectFrom('cost_payments').select('status').execute()).toEqual([{ status: 'claimed' }])
  })

  it('a released claim can be taken again (the call failed before output); a settled one never', async () => {
    const nonce = '0x' + 'cd'.repeat(32)
    expect(await a.claim(claim('pay_A', nonce))).toBe(true)
    expect(await b.claim(claim('pay_B', nonce))).toBe(false)
    await a.release('pay_A')
    expect(await b.claim(claim('pay_B', nonce))).toBe(true)
    await b.markSettled('pay_B', '0x' + '12'.repeat(32), { success: true })
    await a.release('pay_B') // no effect on a settled payment
    expect(await a.claim(claim('pay_C', nonce))).toBe(false)
    expect((await a.get('pay_B'))?.status).toBe('settled')
  })

  it('a settle with an unknown outcome keeps the claim', async () => {
    const nonce = '0x' + 'ef'.repeat(32)
    expect(await a.claim(claim('pay_D', nonce))).toBe(true)
    await a.markSettleUnknown('pay_D', 'socket hang up')
    await a.release('pay_D')
    expect(await b.claim(claim('pay_E', nonce))).toBe(false)
  })
})

// One claim namespace for every paid route (migration 0014): an upload's payment is refused to a call, and back.
describe.each(dialects)('cost and storage claims share one namespace (%s)', (dialect) => {
  let db: TestDatabase
  beforeAll(async () => {
    db = await createTestDatabase(dialect)
  })
  afterAll(async () => {
    await db?.close()
  })

  const deposit = (depositId: string, nonce: string) => ({
    depositId, payer: claim('x').payer, nonce, payTo: claim('x').payTo, network: 'eip155:8453', asset: claim('x').asset, scheme: 'exact',
    amountAtomic: 1_000n, priceAtomic: 1_000n, priceUsd: '0.001', resourceUrl: 'http://gw/store', paymentPayload: {},
  })
  const upload = (depositId: string) => ({ uploadId: `up_${depositId}`, depositId, sha256: 'aa', mimeType: 'a/b', sizeBytes: 1n, appName: 'a', payerTag: '', spoolPath: 'db:x' })

  it('a payment /store holds is refused to a cost call until /store drops it; one a call holds is refused to /store', async () => {
    const ledger = new Ledger(db.db)
    const costs = new CostPaymentLedger(db.db, () => 1_795_400_000)
    const nonce = '0x' + 'cd'.repeat(32)
    expect(await ledger.claimWithUpload(deposit('dep_1', nonce), upload('dep_1'), 'pending_payment')).toBe(true)
    // the payer wrote the address in another case: still the same payment
    expect(await costs.claim({ ...claim('pay_1', nonce.toUpperCase().replace('0X', '0x')), payer: claim('x').payer.toLowerCase() })).toBe(false)
    expect(await db.db.selectFrom('cost_payments').selectAll().execute()).toEqual([])
    await ledger.dropUnpaid('dep_1', 'up_dep_1')
    expect(await costs.claim(claim('pay_2', nonce))).toBe(true)
    expect(await ledger.claimWithUpload(deposit('dep_2', nonce), upload('dep_2'), 'pending_payment')).toBe(false)
    // nothing of the refused upload was kept
    expect(await db.db.selectFrom('storage_deposits').selectAll().execute()).toEqual([])
    expect(await db.db.selectFrom('storage_uploads').selectAll().execute()).toEqual([])
    // settled, the call keeps it for good
    await costs.markSettled('pay_2', '0x' + '12'.repeat(32), {})
    await costs.release('pay_2')
    expect(await ledger.claimWithUpload(deposit('dep_3', nonce), upload('dep_3'), 'pending_payment')).toBe(false)
    expect(await db.db.selectFrom('payment_claims').select(['route', 'ref']).execute()).toEqual([{ route: 'llmChat', ref: 'pay_2' }])
  })
})
