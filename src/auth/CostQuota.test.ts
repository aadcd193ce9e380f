import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { CostQuota } from './CostQuota.js'

const calls = async (handle: TestDatabase, key: string) =>
  Number((await handle.db.selectFrom('cost_usage').select('calls').where('wallet', '=', key).executeTakeFirst())?.calls ?? 0)

describe.each(dialects)('the cost quota of a wallet and of its network on %s', (dialect) => {
  let handle: TestDatabase
  const now = 1_795_000_000
  beforeAll(async () => {
    handle = await createTestDatabase(dialect)
  })
  afterAll(async () => {
    await handle?.close()
  })

  it('counts both in one transaction: the network refusing leaves the wallet uncounted', async () => {
    const quota = new CostQuota(handle.db, 3, () => now, 2)
    await quota.consume('0xA1', '10.0.0.0/24')
    await quota.consume('0xA2', '10.0.0.0/24')
    await expect(quota.consume('0xA3', '10.0.0.0/24')).rejects.toMatchObject({ code: 'quota_exceeded', meta: { scope: 'network', limit: 2 } })
    expect(await calls(handle, '0xa3')).toBe(0)
    expect(await calls(handle, 'net:10.0.0.0/24')).toBe(2)
    // The wallet refusing leaves the network uncounted.
    for (let i = 0; i < 3; i++) await quota.consume('0xB1', `10.0.${i + 1}.0/24`)
    await expect(quota.consume('0xB1', '10.0.9.0/24')).rejects.toMatchObject({ code: 'quota_exceeded', meta: { limit: 3 } })
    expect(await calls(handle, 'net:10.0.9.0/24')).toBe(0)
  })

  it('never exceeds either limit under concurrency', async () => {
    const quota = new CostQuota(handle.db, 4, () => now, 5)
    const wallets = Array.from({ length: 4 }, (_, i) => `0xC${i}`)
    const results = await Promise.allSettled(wallets.flatMap((w) => Array.from({ length: 3 }, () => quota.consume(w, '10.1.0.0/24'))))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5)
    expect(await calls(handle, 'net:10.1.0.0/24')).toBe(5)
    let sum = 0
    for (const w of wallets) sum += await calls(handle, w.toLowerCase())
    expect(sum).toBe(5)
  })
})
