import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { type UsageRecord, UsageLedger } from './UsageLedger.js'

const wallet = '0xCC6Ea14Df3d24fEbEAf620cD8D6ae0e680447f93'
const call = (over: Partial<UsageRecord> = {}): UsageRecord => ({
  wallet,
  route: 'llmChat',
  model: 'svc-tiny-chat:latest',
  promptTokens: 10,
  completionTokens: 5,
  durationMs: 40,
  ttftMs: null,
  streamed: false,
  outcome: 'ok',
  status: 200,
  paidBy: 'quota',
  paymentId: null,
  amountAtomic: null,
  ...over,
})

describe.each(dialects)('usage ledger (%s)', (dialect) => {
  let db: TestDatabase
  let now = Date.UTC(2026, 10, 24, 23, 0) / 1000
  let ledger: UsageLedger
  beforeAll(async () => {
    db = await createTestDatabase(dialect)
    ledger = new UsageLedger(db.db, () => now)
  })
  afterAll(async () => db?.close())

  it('sums calls, paid calls, errors, tokens and exact spend per UTC day, for the wallet only', async () => {
    await ledger.record(call())
    await ledger.record(call({ paidBy: 'payment', paymentId: 'pay_1', amountAtomic: 9_007_199_254_740_993n })) // beyond a double's precision
    now += 2 * 3600 // next UTC day
    await ledger.record(call({ outcome: 'error', status: 502, promptTokens: 0, completionTokens: 0 }))
    await ledger.record(call({ paidBy: 'payment', paymentId: 'pay_2', amountAtomic: 1_500n, streamed: true, ttftMs: 12 }))
    await ledger.record(call({ wallet: '0x1111111111111111111111111111111111111111' }))
    const report = await ledger.report(wallet.toUpperCase().replace('0X', '0x'), 7)
    expect(report.to).toBe('2026-11-25')
    expect(report.days).toEqual([
      { day: '2026-11-24', calls: 2, paid_calls: 1, errors: 0, prompt_tokens: 20, completion_tokens: 10, spend_atomic: '9007199254740993' },
      { day: '2026-11-25', calls: 2, paid_calls: 1, errors: 1, prompt_tokens: 10, completion_tokens: 5, spend_atomic: '1500' },
    ])
    expect(report.totals).toEqual({ calls: 4, paid_calls: 2, errors: 1, prompt_tokens: 30, completion_tokens: 15, spend_atomic: '9007199254742493' })
    // A one-day window is today only.
    expect((await ledger.report(wallet, 1)).days.map((d) => d.day)).toEqual(['2026-11-25'])
  })
})
