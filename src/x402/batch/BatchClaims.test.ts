import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../tests/support/testDatabase.js'
import { BatchClaims } from './BatchClaims.js'

let db: TestDatabase
beforeAll(async () => {
  db = await createTestDatabase('sqlite')
})
afterAll(async () => db?.close())

/** A channel manager that records what it was asked (the facilitator and the chain are the integration test's). */
function manager(claims: { vouchers: number; transaction: string }[][]) {
  const calls: string[] = []
  return {
    calls,
    claim: async () => {
      calls.push('claim')
      return claims.shift() ?? []
    },
    settle: async () => {
      calls.push('settle')
      return { transaction: `0x${'5'.repeat(64)}` }
    },
    refundIdleChannels: async () => {
      calls.push('refund')
      return []
    },
  }
}

const on = { network: 'eip155:8453' as const, asset: `0x${'1'.repeat(40)}` as `0x${string}`, tokenName: 'USD Coin', tokenVersion: '2' }

describe('batch-settlement claim job', () => {
  it('claims on its schedule and sweeps only what it claimed', async () => {
    const m = manager([[{ vouchers: 3, transaction: `0x${'a'.repeat(64)}` }]])
    const claims = new BatchClaims({ db: db.db, chains: [{ on, manager: m as never }], holder: 'i-1', config: { claimIntervalS: 1, refundIdleS: 0 }, now: () => Math.floor(Date.now() / 1000) })
    claims.start()
    await expect.poll(() => m.calls.filter((c) => c === 'claim').length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2)
    await claims.stop()
    // the first run claimed and swept; the later ones claimed nothing and had nothing of theirs to sweep
    expect(m.calls.slice(0, 2)).toEqual(['claim', 'settle'])
    expect(m.calls.filter((c) => c === 'settle')).toHaveLength(1)
    const txs = await db.db.selectFrom('batch_settlement_txs').select(['kind', 'vouchers']).orderBy('created_at').execute()
    expect(txs).toEqual([{ kind: 'claim', vouchers: 3 }, { kind: 'settle', vouchers: 0 }])
  })

  it('another instance holding the chain\'s lease makes this one report busy and claim nothing', async () => {
    const m = manager([[{ vouchers: 1, transaction: `0x${'b'.repeat(64)}` }]])
    const now = () => Math.floor(Date.now() / 1000)
    await db.db.insertInto('batch_settlement_leases').values({ name: 'claim:eip155:8453', holder: 'i-2', expires_at: now() + 60 }).execute()
    const claims = new BatchClaims({ db: db.db, chains: [{ on, manager: m as never }], holder: 'i-1', config: { claimIntervalS: 0, refundIdleS: 0 }, now })
    expect(await claims.run()).toEqual([{ network: 'eip155:8453', outcome: 'busy', claims: [], refunds: [] }])
    expect(m.calls).toEqual([])
    // once the lease expired (its holder died), the job runs here
    await db.db.updateTable('batch_settlement_leases').set({ expires_at: now() - 1 }).execute()
    expect((await claims.run())[0]).toMatchObject({ outcome: 'ran', claims: [{ vouchers: 1 }] })
  })
})
