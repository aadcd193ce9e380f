import { channelRecord } from '../../tests/support/batchChannel.js'
import type { Channel } from '@x402/evm/batch-settlement/server'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import type { BatchSettlement } from '../x402/batch/BatchSettlement.js'
import { chargeInterrupted } from '../x402/batch/chargeInterrupted.js'
import { SqlChannelStorage } from '../x402/batch/SqlChannelStorage.js'
import { readX402Config } from '../x402/config.js'
import type { Facilitator } from '../x402/FacilitatorPool.js'
import { CHECKPOINT_INTERVAL_MS, CostPayments } from './CostPayments.js'
import type { BatchCheckpoint } from './InterruptedCalls.js'
import { UPTO_LEASE_S } from './InterruptedCalls.js'

// A `batch-settlement` call whose gateway instance dies mid-stream: its voucher was verified (the channel holds
// it and is reserved for the call), the charge never committed. Its `cost_payments` row carries checkpoints like
// an `upto` call's; another replica takes it once the heartbeat is older than the lease and charges the last
// checkpoint on the channel — never twice, never above the voucher — or releases the voucher when nothing was
// served. The instance "dies" by never writing again: its row and the channel are as the call left them.
// Metered: 3 per token, at least 5, a voucher's step (the most a call costs) 300.
const NETWORK = 'eip155:8453'
const PAYER: `0x${string}` = '0xcc6ea14df3d24febeaf620cd8d6ae0e680447f93'
const WALLET = '0x1111111111111111111111111111111111111111'
const CHANNEL = `0x${'ab'.repeat(32)}`
const STEP = 300n
const ADDR = (n: number): `0x${string}` => `0x${n.toString(16).padStart(40, '0')}`
const now = () => Math.floor(Date.now() / 1000)

const facilitator: Facilitator = {
  verify: async () => ({ isValid: true }),
  settle: async () => {
    throw new Error('no settle is sent for a batch voucher')
  },
}
const x402 = readX402Config({ SERVICE_X402__PAY_TO_EVM: ADDR(9), FACILITATOR_TOKEN: 't' })
const tokenPricing = { perTokenMicro: 3_000_000n, minAtomic: 5n, maxAtomic: STEP }

describe.each(dialects)('batch-settlement calls interrupted mid-stream, on %s', (dialect) => {
  let db: TestDatabase
  let storage: SqlChannelStorage
  /** Only what the sweep uses of the scheme: its channel records, in the test database. */
  /** Settles `settles` (the charges committed) and verifies any voucher of the channel (the scheme's checks are its own tests'). */
  let charges: bigint[]
  const requirement = { scheme: 'batch-settlement' as const, network: NETWORK, amount: STEP.toString(), maxAmountRequired: STEP.toString(), resource: '', description: '', mimeType: '', payTo: ADDR(9), maxTimeoutSeconds: 300, asset: ADDR(4), extra: { receiverAuthorizer: ADDR(3), withdrawDelay: 900 } }
  const batch = () =>
    ({
      chargeInterrupted: (network: string, v: Parameters<typeof chargeInterrupted>[1]) => chargeInterrupted(new SqlChannelStorage(db.db, network), v),
      requirement: () => requirement,
      requirements: () => [requirement],
      hold: async () => ({
        settle: async (charge: bigint) => {
          charges.push(charge)
          return { success: true, transaction: '', network: NETWORK, payer: PAYER }
        },
        cancel: async () => {},
      }),
    }) as unknown as BatchSettlement
  const replica = (instanceId: string, aheadS = 0, withBatch = true) =>
    new CostPayments({ db: db.db, x402, priceAtomic: 0n, tokenPricing, publicOrigin: 'http://gw.test', facilitator, instanceId, now: () => now() + aheadS, ...(withBatch ? { batch: batch() } : {}) })

  beforeAll(async () => {
    db = await createTestDatabase(dialect)
    storage = new SqlChannelStorage(db.db, NETWORK)
  })
  afterAll(async () => db?.close())
  beforeEach(async () => {
    for (const table of ['cost_payments', 'payment_claims', 'llm_usage', 'batch_channels'] as const) await db.db.deleteFrom(table).execute()
    charges = []
  })
  afterEach(() => vi.useRealTimers())

  /** A voucher header of running total `total` on the channel (the fake scheme accepts any signature). */
  const voucherHeader = (total: bigint) => ({
    'payment-signature': Buffer.from(
      JSON.stringify({
        x402Version: 2,
        accepted: { scheme: 'batch-settlement', network: NETWORK },
        payload: {
          type: 'voucher',
          channelConfig: { payer: PAYER, payerAuthorizer: PAYER, receiver: ADDR(9), receiverAuthorizer: ADDR(3), token: ADDR(4), withdrawDelay: 900, salt: `0x${'0'.repeat(64)}` },
          voucher: { channelId: CHANNEL, maxClaimableAmount: total.toString(), signature: `0x${'11'.repeat(65)}` },
        },
      }),
    ).toString('base64'),
  })
  const info = { wallet: WALLET, route: 'llmChat', method: 'POST', path: '/llm/chat' }

  /** The channel as a verified voucher of running total `charged + STEP` left it: holding it, reserved for its call. */
  async function channelVerified(charged: bigint): Promise<void> {
    await storage.updateChannel(CHANNEL, (current) => ({
      ...(current ?? channelRecord({ channelId: CHANNEL, payer: PAYER })),
      chargedCumulativeAmount: charged.toString(),
      signedMaxClaimable: (charged + STEP).toString(),
      pendingRequest: { pendingId: 'the-dead-call', signedMaxClaimable: (charged + STEP).toString(), expiresAt: Date.now() + 600_000 },
    }))
  }

  /**
   * A call of the voucher `charged + STEP`, claimed by the instance that then died, after checkpointing `tokens`
   * (as `#beginBatch` claims it and `PaidCall.keepCheckpoints` writes it); false when the voucher is taken.
   */
  async function deadCall(serving: CostPayments, charged: bigint, tokens: number | null, o: { deposit?: boolean } = {}): Promise<string | undefined> {
    const voucherTotal = charged + STEP
    const paymentId = `pay_${Math.random().toString(36).slice(2)}`
    const checkpointOf = (n: number) => {
      const request: BatchCheckpoint = { scheme: 'batch-settlement', channelId: CHANNEL, voucherTotal: voucherTotal.toString(), deposit: o.deposit === true }
      return { tokens: n, amountAtomic: tokens === null ? 0n : n * 3 < 5 ? 5n : BigInt(n * 3), request }
    }
    const claimed = await serving.ledger.claim({
      paymentId,
      payer: PAYER,
      nonce: `batch:${CHANNEL}:${voucherTotal}`,
      wallet: WALLET,
      route: 'llmChat',
      network: NETWORK,
      asset: ADDR(4),
      payTo: ADDR(9),
      amountAtomic: STEP,
      priceAtomic: STEP,
      paymentPayload: {},
      checkpoint: { ...checkpointOf(0), owner: 'replica-serving' },
    })
    if (!claimed) return undefined
    await channelVerified(charged)
    if (tokens) expect(await serving.ledger.checkpoint(paymentId, 'replica-serving', checkpointOf(tokens))).toBe(true)
    return paymentId
  }

  const channel = async () => (await storage.get(CHANNEL)) as Channel
  const usage = () => db.db.selectFrom('llm_usage').select(['payment_id', 'completion_tokens', 'amount_atomic', 'paid_by']).orderBy('created_at').execute()

  it('another replica charges the last checkpoint on the channel after the lease: the row settles, the reservation ends, the usage is recorded once', async () => {
    const serving = replica('replica-serving')
    const paymentId = (await deadCall(serving, 1000n, 17)) as string
    // before the lease runs out the call is alive for every replica
    expect(await replica('replica-soon', UPTO_LEASE_S - 2).interrupted.sweep()).toEqual([])
    const later = replica('replica-later', UPTO_LEASE_S + 1)
    expect(await later.interrupted.sweep()).toEqual([paymentId])
    expect(await channel()).toMatchObject({ chargedCumulativeAmount: '1051', signedMaxClaimable: '1300' })
    expect((await channel()).pendingRequest).toBeUndefined()
    expect(await later.ledger.get(paymentId)).toMatchObject({ status: 'settled', owner: 'replica-later' })
    expect(await usage()).toEqual([{ payment_id: paymentId, completion_tokens: 17, amount_atomic: '51', paid_by: 'payment' }])
    // nothing left claimed: later sweeps find nothing
    expect(await replica('replica-last', 4 * UPTO_LEASE_S).interrupted.sweep()).toEqual([])
  })

  it('a paid batch call checkpoints like upto: the claim carries the heartbeat (nothing delivered yet: 0), a live call is never taken however long it runs, a call that ended leaves nothing claimed', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    const serving = replica('replica-serving')
    let tokens = 0
    const paid = await serving.begin(voucherHeader(STEP), info)
    expect(await serving.ledger.get(paid.paymentId)).toMatchObject({ status: 'claimed', owner: 'replica-serving', checkpoint_amount: '0', heartbeat_at: expect.anything() })
    paid.keepCheckpoints(() => tokens)
    tokens = 12
    vi.advanceTimersByTime(CHECKPOINT_INTERVAL_MS)
    await vi.waitFor(async () => expect(await serving.ledger.get(paid.paymentId)).toMatchObject({ checkpoint_tokens: expect.toSatisfy((n) => Number(n) === 12), checkpoint_amount: '36' }), { interval: 5, timeout: 2_000 })
    for (const other of [replica('replica-now'), replica('replica-soon', UPTO_LEASE_S - 2)]) expect(await other.interrupted.sweep()).toEqual([])
    await paid.settle(20)
    expect(charges).toEqual([60n])
    expect(await replica('replica-later', 4 * UPTO_LEASE_S).interrupted.sweep()).toEqual([])
    expect(await serving.ledger.get(paid.paymentId)).toMatchObject({ status: 'settled' })
  })

  it('a paid batch call abandoned mid-stream (its instance dead) is taken after the lease and charged its checkpoint; were it only paused, its checkpoints no longer write', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    const serving = replica('replica-serving')
    let tokens = 0
    const paid = await serving.begin(voucherHeader(1000n + STEP), info)
    await channelVerified(1000n)
    paid.keepCheckpoints(() => tokens)
    tokens = 7
    vi.advanceTimersByTime(CHECKPOINT_INTERVAL_MS)
    await vi.waitFor(async () => expect(await serving.ledger.get(paid.paymentId)).toMatchObject({ checkpoint_tokens: expect.toSatisfy((n) => Number(n) === 7) }), { interval: 5, timeout: 2_000 })
    expect(await replica('replica-later', UPTO_LEASE_S + 1).interrupted.sweep()).toEqual([paid.paymentId])
    expect((await channel()).chargedCumulativeAmount).toBe('1021')
    expect(charges).toEqual([])
    // had it only been paused, its next checkpoints write nothing: the row is the taker's
    tokens = 90
    vi.advanceTimersByTime(3 * CHECKPOINT_INTERVAL_MS)
    await new Promise((r) => setTimeout(r, 100))
    expect(await serving.ledger.get(paid.paymentId)).toMatchObject({ status: 'settled', owner: 'replica-later', checkpoint_tokens: expect.toSatisfy((n) => Number(n) === 7), checkpoint_amount: '21' })
    vi.clearAllTimers()
  })

  it('attacker: killing call after call gets no free service — each dead call is charged what it served, and its voucher never pays again', async () => {
    const serving = replica('replica-serving')
    let charged = 0n
    for (const tokens of [10, 40, 1]) {
      const paymentId = (await deadCall(serving, charged, tokens)) as string
      expect(await replica(`replica-${tokens}`, UPTO_LEASE_S + 1).interrupted.sweep()).toEqual([paymentId])
      charged += BigInt(Math.max(5, tokens * 3))
      expect((await channel()).chargedCumulativeAmount).toBe(charged.toString())
    }
    expect(charged).toBe(30n + 120n + 5n)
    // the voucher of a charged call is spent: the same running total is refused (409 payment_replayed)
    expect(await deadCall(serving, 0n, 3)).toBeUndefined()
    expect((await usage()).map((u) => u.amount_atomic)).toEqual(['30', '120', '5'])
  })

  it('attacker/race: two replicas sweeping at once charge the dead call once', async () => {
    const paymentId = (await deadCall(replica('replica-serving'), 600n, 50)) as string
    const [a, b] = [replica('replica-a', UPTO_LEASE_S + 5), replica('replica-b', UPTO_LEASE_S + 5)]
    const taken = await Promise.all([a.interrupted.sweep(), b.interrupted.sweep(), a.interrupted.sweep()])
    expect(taken.flat()).toEqual([paymentId])
    expect((await channel()).chargedCumulativeAmount).toBe('750')
    expect(await usage()).toHaveLength(1)
  })

  it('a taker that died after charging (its row still claimed) is taken again and charges nothing more: the channel moved past the voucher', async () => {
    const paymentId = (await deadCall(replica('replica-serving'), 0n, 20)) as string
    expect(await replica('replica-first', UPTO_LEASE_S + 1).interrupted.sweep()).toEqual([paymentId])
    await db.db.updateTable('cost_payments').set({ status: 'claimed' }).where('payment_id', '=', paymentId).execute()
    expect(await replica('replica-second', 3 * UPTO_LEASE_S).interrupted.sweep()).toEqual([paymentId])
    expect((await channel()).chargedCumulativeAmount).toBe('60')
    expect(await usage()).toEqual([{ payment_id: paymentId, completion_tokens: 20, amount_atomic: '60', paid_by: 'payment' }])
    expect((await replica('x').ledger.get(paymentId))?.status).toBe('settle_unknown')
  })

  it('never charged above what the payer signed: a checkpoint above the voucher\'s step is refused', async () => {
    await channelVerified(0n)
    await expect(chargeInterrupted(storage, { channelId: CHANNEL, voucherTotal: STEP, stepAtomic: STEP, chargeAtomic: STEP + 1n })).rejects.toThrow('outside')
    expect((await channel()).chargedCumulativeAmount).toBe('0')
  })

  it('a call that served nothing chargeable (per-call price, killed before its first chunk) releases its voucher: the same running total pays the next call', async () => {
    const serving = replica('replica-serving')
    const paymentId = (await deadCall(serving, 300n, null)) as string
    expect(await replica('replica-later', UPTO_LEASE_S + 1).interrupted.sweep()).toEqual([paymentId])
    expect(await serving.ledger.get(paymentId)).toBeUndefined()
    expect(await channel()).toMatchObject({ chargedCumulativeAmount: '300' })
    expect((await channel()).pendingRequest).toBeUndefined()
    expect(await deadCall(serving, 300n, 4)).toBeDefined()
    expect(await usage()).toEqual([{ payment_id: null, completion_tokens: 0, amount_atomic: null, paid_by: 'payment' }])
  })

  it('a voucher that came with its deposit is not charged (the deposit never reached the chain) and is released; a channel refunded meanwhile is not charged and the row is closed', async () => {
    const serving = replica('replica-serving')
    const withDeposit = (await deadCall(serving, 0n, 30, { deposit: true })) as string
    expect(await replica('replica-later', UPTO_LEASE_S + 1).interrupted.sweep()).toEqual([withDeposit])
    expect(await serving.ledger.get(withDeposit)).toBeUndefined()
    expect((await channel()).chargedCumulativeAmount).toBe('0')
    const refunded = (await deadCall(serving, 0n, 30)) as string
    await storage.updateChannel(CHANNEL, () => undefined)
    expect(await replica('replica-later', UPTO_LEASE_S + 1).interrupted.sweep()).toEqual([refunded])
    expect(await serving.ledger.get(refunded)).toMatchObject({ status: 'settle_unknown' })
    expect(await storage.get(CHANNEL)).toBeUndefined()
  })

  it('a replica that cannot charge the channel (not configured on its chain) leaves the row, still claimed, to the next replica once its take lapses', async () => {
    const paymentId = (await deadCall(replica('replica-serving'), 0n, 5)) as string
    const elsewhere = new CostPayments({
      db: db.db,
      x402,
      priceAtomic: 0n,
      tokenPricing,
      publicOrigin: 'http://gw.test',
      facilitator,
      instanceId: 'replica-elsewhere',
      now: () => now() + UPTO_LEASE_S + 1,
      batch: { chargeInterrupted: async () => Promise.reject(new Error('batch-settlement is not configured on eip155:8453 here')) } as unknown as BatchSettlement,
    })
    expect(await elsewhere.interrupted.sweep()).toEqual([])
    expect(await elsewhere.ledger.get(paymentId)).toMatchObject({ status: 'claimed', owner: 'replica-elsewhere' })
    expect(await replica('replica-batch', 2 * UPTO_LEASE_S + 2).interrupted.sweep()).toEqual([paymentId])
    expect((await channel()).chargedCumulativeAmount).toBe('15')
    expect(await usage()).toHaveLength(1)
  })

  it('a replica without batch-settlement leaves batch rows to one that has it', async () => {
    const paymentId = (await deadCall(replica('replica-serving'), 0n, 5)) as string
    expect(await replica('replica-plain', UPTO_LEASE_S + 1, false).interrupted.sweep()).toEqual([])
    expect(await replica('replica-batch', UPTO_LEASE_S + 1).interrupted.sweep()).toEqual([paymentId])
  })
})
