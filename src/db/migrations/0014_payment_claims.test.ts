import { sql } from 'kysely'
import { migrateToLatest } from '../migrateToLatest.js'
import { afterEach, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../../tests/support/testDatabase.js'

// A database that already holds claims of both routes gains the shared namespace with every one of them in it,
// so a payment claimed before the upgrade is refused to the other route after it.
describe.each(dialects)('migration 0014_payment_claims (%s)', (dialect) => {
  let db: TestDatabase | undefined
  afterEach(async () => {
    await db?.close()
  })

  it('copies the claims of storage_deposits and cost_payments in (the first of a key wins)', async () => {
    db = await createTestDatabase(dialect)
    const schema = dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.db)).rows[0]?.schema : undefined
    // through migrateToLatest: it retries the catalogue race a parallel file's dropped schema causes (failed CI once)
    await migrateToLatest(db.db, { schema, to: '0013_payment_identifiers' }) // to just before 0014, whatever came after
    const row = { pay_to: '0xp', asset: '0xa', amount_atomic: '1', price_atomic: '1', status: 'settled', payment_payload: '{}', created_at: 1, updated_at: 1 }
    await db.db.insertInto('storage_deposits').values({ ...row, deposit_id: 'dep_1', payer: '0xaa', nonce: '0x01', network: 'eip155:8453', scheme: 'exact', price_usd: '0', tx_hash: null, resource_url: 'u', settlement: null }).execute()
    await db.db.insertInto('cost_payments').values({ ...row, payment_id: 'pay_1', payer: '0xaa', nonce: '0x02', wallet: '0xw', route: 'llmChat', network: 'eip155:8453', tx_hash: null, settlement: null }).execute()
    // the same payment on both routes (possible before the shared namespace): the upload's claim is kept
    await db.db.insertInto('cost_payments').values({ ...row, payment_id: 'pay_2', payer: '0xaa', nonce: '0x01', wallet: '0xw', route: 'llmGenerate', network: 'eip155:8453', tx_hash: null, settlement: null }).execute()
    await migrateToLatest(db.db, { schema })
    const claims = await db.db.selectFrom('payment_claims').select(['network', 'payer', 'nonce', 'route', 'ref']).orderBy('nonce').execute()
    expect(claims).toEqual([
      { network: 'eip155:8453', payer: '0xaa', nonce: '0x01', route: 'store', ref: 'dep_1' },
      { network: 'eip155:8453', payer: '0xaa', nonce: '0x02', route: 'llmChat', ref: 'pay_1' },
    ])
  })
})
