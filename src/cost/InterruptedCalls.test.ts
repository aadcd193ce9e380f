import { randomBytes } from 'node:crypto'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { UPTO_TEST, uptoPermitHeader } from '../../tests/support/uptoPermitHeader.js'
import { readX402Config } from '../x402/config.js'
import type { InvalidPaymentError } from '../x402/errors.js'
import type { FacilitatorSettleResponse } from '../x402/FacilitatorClient.js'
import type { Facilitator } from '../x402/FacilitatorPool.js'
import { CHECKPOINT_INTERVAL_MS, CostPayments, type PaidCall } from './CostPayments.js'
import type { KyselyPlugin } from 'kysely'
import { CostPaymentLedger } from './CostPaymentLedger.js'
import { InterruptedCalls, UPTO_LEASE_S } from './InterruptedCalls.js'
import { SettlementDebts } from './SettlementDebts.js'
import { UsageLedger } from './UsageLedger.js'

// An `upto` call whose gateway instance dies mid-stream (no settle, no release): another replica on the same
// database takes it once its heartbeat is older than the lease and makes its last checkpoint a debt of the
// payer, which the reconciler settles through the facilitator. Price 3 per token, minimum 5, at most 300.
const { payTo: PAY_TO, payer: PAYER, facilitator: FACILITATOR } = UPTO_TEST
const WALLET = '0x1111111111111111111111111111111111111111'
const now = () => Math.floor(Date.now() / 1000)

let settles: { amount: string; nonce: string }[]
const facilitator: Facilitator = {
  verify: async () => ({ isValid: true, payer: PAYER }),
  settle: async (payload, requirements): Promise<FacilitatorSettleResponse> => {
    const amount = (requirements as { amount: string }).amount
    settles.push({ amount, nonce: String((payload.payload as { permit2Authorization?: { nonce?: string } }).permit2Authorization?.nonce) })
    return { network: 'eip155:8453', payer: PAYER, success: true, transaction: `0x${randomBytes(32).toString('hex')}`, amount }
  },
}

const x402 = readX402Config({ SERVICE_X402__PAY_TO_EVM: PAY_TO, FACILITATOR_TOKEN: 't', SERVICE_X402__UPTO_FACILITATOR_ADDRESS: FACILITATOR })
const tokenPricing = { perTokenMicro: 3_000_000n, minAtomic: 5n, maxAtomic: 300n }
const info = { wallet: WALLET, route: 'llmChat', method: 'POST', path: '/llm/chat' }

/** A well-formed `upto` header for at most 300 (the scripted facilitator accepts any signature); its nonce. */
const uptoHeader = (validS = 600) => uptoPermitHeader({ validS, now: now() })

describe.each(dialects)('upto calls interrupted mid-stream, on %s', (dialect) => {
  let db: TestDatabase
  /** The instance serving the calls (it "dies": its checkpoints stop, nothing settles or releases). */
  let serving: CostPayments
  /** Other replicas on the same database, `aheadS` seconds later than the serving one. */
  const replica = (instanceId: string, aheadS = 0) =>
    new CostPayments({ db: db.db, x402, priceAtomic: 1_000n, tokenPricing, publicOrigin: 'http://gw.test', facilitator, maxCallS: 120, instanceId, now: () => now() + aheadS })
  let tokens: number

  beforeAll(async () => {
    db = await createTestDatabase(dialect)
    serving = replica('replica-serving')
  })
  afterAll(async () => db?.close())
  beforeEach(async () => {
    settles = []
    tokens = 0
    await db.db.deleteFrom('settlement_debts').execute()
    await db.db.deleteFrom('cost_payments').execute()
    await db.db.deleteFrom('llm_usage').execute()
    // the checkpoint timer is driven by the test: a dead instance is one whose timer never fires again
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
  })
  afterEach(() => vi.useRealTimers())

  const row = (paymentId: string) => serving.ledger.get(paymentId)
  const usageOf = (paymentId: string) => db.db.selectFrom('llm_usage').selectAll().where('payment_id', '=', paymentId).execute()
  /** A call that streamed `served` tokens and checkpointed them once (the write landed). */
  async function streamedPastACheckpoint(served: number, validS = 600): Promise<{ paid: PaidCall; nonce: string; deadline: number }> {
    const header = uptoHeader(validS)
    const paid = await serving.begin(header.headers, info)
    paid.keepCheckpoints(() => tokens)
    tokens = served
    vi.advanceTimersByTime(CHECKPOINT_INTERVAL_MS)
    await vi.waitFor(async () => expect(Number((await row(paid.paymentId))?.checkpoint_tokens)).toBe(served), { interval: 5, timeout: 2_000 })
    return { paid, ...header }
  }

  it('the first checkpoint rides on the claim: nothing delivered yet (0, not the minimum), this instance as owner, the permit deadline', async () => {
    const header = uptoHeader()
    const paid = await serving.begin(header.headers, info)
    expect(await row(paid.paymentId)).toMatchObject({ status: 'claimed', owner: 'replica-serving', checkpoint_amount: '0', valid_until: expect.anything() })
    expect(Number((await row(paid.paymentId))?.valid_until)).toBe(header.deadline)
    await paid.release()
  })

  it('another replica takes the dead call after the lease, records a debt of the checkpointed tokens (the payer is refused until then) and settles it once', async () => {
    const { paid, nonce, deadline } = await streamedPastACheckpoint(17)
    tokens = 25 // served after the last checkpoint: the instance dies before the next one
    const later = replica('replica-later', UPTO_LEASE_S + 1)
    expect(await later.interrupted.sweep()).toEqual([paid.paymentId])
    const debt = await later.debts.get(paid.paymentId)
    expect(debt).toMatchObject({ status: 'owed', scheme: 'upto', amount_atomic: '51', cap_atomic: '300', nonce, payer: PAYER.toLowerCase() })
    expect(Number(debt?.valid_until)).toBe(deadline)
    expect(await later.ledger.get(paid.paymentId)).toMatchObject({ status: 'settle_unknown', owner: 'replica-later' })
    // until it is settled, the payer pays for no further call, on any replica
    const refused = await serving.begin(uptoHeader().headers, info).then(
      () => undefined,
      (e: unknown) => e as InvalidPaymentError,
    )
    expect(refused?.code).toBe('settlement_owed')
    await later.reconciler.reconcile(paid.paymentId)
    expect(settles).toEqual([{ amount: '51', nonce }])
    const amount = BigInt(settles[0]!.amount)
    expect(amount >= 17n * 3n && amount <= 300n).toBe(true)
    expect(await later.debts.get(paid.paymentId)).toMatchObject({ status: 'settled', resolution: 'settled_on_retry' })
    expect(await later.ledger.get(paid.paymentId)).toMatchObject({ status: 'settled' })
    // taken once: a later sweep finds nothing
    expect(await replica('replica-last', 3 * UPTO_LEASE_S).interrupted.sweep()).toEqual([])
  })

  it('the taker records the call in the usage ledger once: the checkpointed tokens and what they are billed, in the wallet\'s GET /llm/usage view', async () => {
    const { paid } = await streamedPastACheckpoint(17)
    const later = replica('replica-later', UPTO_LEASE_S + 1)
    expect(await later.interrupted.sweep()).toEqual([paid.paymentId])
    const usage = await usageOf(paid.paymentId)
    expect(usage).toHaveLength(1)
    expect(usage[0]).toMatchObject({ wallet: WALLET.toLowerCase(), route: 'llmChat', completion_tokens: 17, amount_atomic: '51', paid_by: 'payment', outcome: 'error' })
    // the wallet's usage report counts the call, its tokens and its spend
    const { UsageLedger } = await import('./UsageLedger.js')
    const report = await new UsageLedger(db.db, now).report(WALLET, 1)
    expect(report.totals).toMatchObject({ calls: 1, paid_calls: 1, errors: 1, completion_tokens: 17, spend_atomic: '51' })
  })

  it('attacker/crash: a taker that died after recording the debt and usage (its row still claimed) is taken again: still one debt, one usage row, one settlement', async () => {
    const { paid } = await streamedPastACheckpoint(9)
    const first = replica('replica-first', UPTO_LEASE_S + 1)
    expect(await first.interrupted.sweep()).toEqual([paid.paymentId])
    // as if the taker had died before its last write: the row claimed again, its heartbeat stale
    await db.db.updateTable('cost_payments').set({ status: 'claimed' }).where('payment_id', '=', paid.paymentId).execute()
    const second = replica('replica-second', 3 * UPTO_LEASE_S)
    expect(await second.interrupted.sweep()).toEqual([paid.paymentId])
    expect(await usageOf(paid.paymentId)).toHaveLength(1)
    expect(await db.db.selectFrom('settlement_debts').select('payment_id').execute()).toHaveLength(1)
    await Promise.all([first.reconciler.reconcile(paid.paymentId), second.reconciler.reconcile(paid.paymentId)])
    expect(settles.map((s) => s.amount)).toEqual(['27'])
  })

  it('attacker/race: two replicas sweeping at once take the dead call once; one debt, one settlement', async () => {
    const { paid } = await streamedPastACheckpoint(40)
    const [a, b] = [replica('replica-a', UPTO_LEASE_S + 5), replica('replica-b', UPTO_LEASE_S + 5)]
    const taken = await Promise.all([a.interrupted.sweep(), b.interrupted.sweep(), a.interrupted.sweep()])
    expect(taken.flat()).toEqual([paid.paymentId])
    await Promise.all([a.reconciler.reconcile(paid.paymentId), b.reconciler.reconcile(paid.paymentId)])
    expect(settles.map((s) => s.amount)).toEqual(['120'])
    expect(await usageOf(paid.paymentId)).toHaveLength(1)
  })

  it('a live call (heartbeat fresher than the lease) is never taken, however often others sweep; its checkpoints keep moving', async () => {
    const { paid } = await streamedPastACheckpoint(10)
    const others = [replica('replica-now'), replica('replica-soon', UPTO_LEASE_S - 2)]
    for (const other of others) expect(await other.interrupted.sweep()).toEqual([])
    tokens = 30
    vi.advanceTimersByTime(CHECKPOINT_INTERVAL_MS)
    await vi.waitFor(async () => expect(await row(paid.paymentId)).toMatchObject({ checkpoint_amount: '90', owner: 'replica-serving', status: 'claimed' }), { interval: 5, timeout: 2_000 })
    for (const other of others) expect(await other.interrupted.sweep()).toEqual([])
    expect(await serving.debts.get(paid.paymentId)).toBeUndefined()
    await paid.settle(30)
    expect(settles.map((s) => s.amount)).toEqual(['90'])
  })

  it('attacker/race: a heartbeat that lands between the sweep seeing the row stale and taking it keeps the call its instance\'s', async () => {
    const { paid } = await streamedPastACheckpoint(6)
    // the serving instance stalled past the lease (its last heartbeat is old) …
    await db.db.updateTable('cost_payments').set({ heartbeat_at: now() - UPTO_LEASE_S - 5 }).where('payment_id', '=', paid.paymentId).execute()
    // … and its next checkpoint lands just after another replica's sweep read the row as stale, before it takes it
    let landed = false
    const heartbeatAfterTheRead: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        if (!landed && args.result.rows.some((r) => (r as { payment_id?: unknown }).payment_id === paid.paymentId)) {
          landed = true
          tokens = 11
          vi.advanceTimersByTime(CHECKPOINT_INTERVAL_MS)
          await vi.waitFor(async () => expect(Number((await row(paid.paymentId))?.checkpoint_tokens)).toBe(11), { interval: 5, timeout: 2_000 })
        }
        return args.result
      },
    }
    const watched = db.db.withPlugin(heartbeatAfterTheRead)
    const sweeper = new InterruptedCalls({ ledger: new CostPaymentLedger(watched, now), debts: new SettlementDebts(db.db, now), usage: new UsageLedger(db.db, now), owner: 'replica-other', now })
    expect(await sweeper.sweep()).toEqual([])
    expect(landed).toBe(true)
    expect(await row(paid.paymentId)).toMatchObject({ status: 'claimed', owner: 'replica-serving' })
    expect(await serving.debts.get(paid.paymentId)).toBeUndefined()
    expect(await usageOf(paid.paymentId)).toEqual([])
    await paid.settle(11)
    expect(settles.map((s) => s.amount)).toEqual(['33'])
  })

  it('a whole answer (nothing delivered before it is settled) killed mid-generation owes nothing: the taker settles it as 0, no debt, nothing sent', async () => {
    const header = uptoHeader()
    const paid = await serving.begin(header.headers, info)
    tokens = 40 // generated, never delivered: a whole answer reaches the client only once settled
    paid.keepCheckpoints(() => null)
    vi.advanceTimersByTime(CHECKPOINT_INTERVAL_MS)
    await vi.waitFor(async () => expect(Number((await row(paid.paymentId))?.heartbeat_at)).toBeGreaterThan(0), { interval: 5, timeout: 2_000 })
    expect(await row(paid.paymentId)).toMatchObject({ status: 'claimed', checkpoint_amount: '0' })
    const later = replica('replica-later', UPTO_LEASE_S + 1)
    expect(await later.interrupted.sweep()).toEqual([paid.paymentId])
    expect(await later.debts.get(paid.paymentId)).toBeUndefined()
    expect(await later.ledger.get(paid.paymentId)).toMatchObject({ status: 'settled', tx_hash: null })
    expect(settles).toEqual([])
  })

  it('attacker/race: an instance paused past the lease (not dead) that resumes settles nothing — the taker bills the checkpoint, once', async () => {
    const { paid, nonce } = await streamedPastACheckpoint(17)
    const later = replica('replica-later', UPTO_LEASE_S + 1)
    expect(await later.interrupted.sweep()).toEqual([paid.paymentId])
    // the paused instance wakes up, its stream ends with 30 tokens served: its settle is refused before the facilitator
    await expect(paid.settle(30)).rejects.toMatchObject({ code: 'call_taken_over' })
    expect(settles).toEqual([])
    await later.reconciler.reconcile(paid.paymentId)
    expect(settles).toEqual([{ amount: '51', nonce }])
    expect(await later.ledger.get(paid.paymentId)).toMatchObject({ status: 'settled', owner: 'replica-later' })
  })

  it('a call that ended normally (settled, or released) is never swept, and its checkpoints stop', async () => {
    const { paid } = await streamedPastACheckpoint(12)
    await paid.settle(20)
    const released = await streamedPastACheckpoint(3)
    await released.paid.release()
    tokens = 99
    vi.advanceTimersByTime(5 * CHECKPOINT_INTERVAL_MS)
    expect(vi.getTimerCount()).toBe(0)
    expect(await replica('replica-later', 3 * UPTO_LEASE_S).interrupted.sweep()).toEqual([])
    expect(await serving.debts.get(paid.paymentId)).toBeUndefined()
    expect(await row(paid.paymentId)).toMatchObject({ status: 'settled' })
    expect(settles.map((s) => s.amount)).toEqual(['60'])
  })

  it('a call found after its permit expired is recorded all the same and closed unsettled by the reconciler (no settle is sent)', async () => {
    const { paid } = await streamedPastACheckpoint(8, 200)
    const muchLater = replica('replica-much-later', 400)
    expect(await muchLater.interrupted.sweep()).toEqual([paid.paymentId])
    expect(await muchLater.debts.get(paid.paymentId)).toMatchObject({ status: 'owed', amount_atomic: '24' })
    await muchLater.reconciler.reconcile(paid.paymentId)
    expect(await muchLater.debts.get(paid.paymentId)).toMatchObject({ status: 'forgiven', resolution: 'unsettleable' })
    expect(settles).toEqual([])
    // its usage is recorded (8 tokens served), with nothing spent: the permit can no longer pay
    expect(await db.db.selectFrom('llm_usage').select(['completion_tokens', 'amount_atomic', 'payment_id']).execute()).toEqual([{ completion_tokens: 8, amount_atomic: null, payment_id: null }])
  })
})
