import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, dialects, type TestDatabase } from '../../tests/support/testDatabase.js'
import { UPTO_TEST, uptoPermitHeader } from '../../tests/support/uptoPermitHeader.js'
import { readX402Config } from '../x402/config.js'
import { FacilitatorUnavailableError, InvalidPaymentError } from '../x402/errors.js'
import type { FacilitatorSettleResponse } from '../x402/FacilitatorClient.js'
import type { Facilitator } from '../x402/FacilitatorPool.js'
import { CostPayments, type PaidCall } from './CostPayments.js'

// Acceptance windows and settlement debts of cost calls against a facilitator whose answers the test scripts
// (the devnet chain and the real facilitator: tests/llm/settlementDebts.integration.test.ts).
const OTHER_PAYER = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
const { payTo: PAY_TO, payer: PAYER, facilitator: FACILITATOR } = UPTO_TEST
const WALLET = '0x1111111111111111111111111111111111111111'
const OTHER_WALLET = '0x2222222222222222222222222222222222222222'
const now = () => Math.floor(Date.now() / 1000)

type SettleScript = 'ok' | 'refused' | 'pending' | 'lost'
/** What the facilitator answers next; every settle request it got. */
let script: SettleScript
let verified: number
let settles: { amount: string; nonce: string }[]
const tx = () => `0x${randomBytes(32).toString('hex')}`
const facilitator: Facilitator = {
  verify: async () => {
    verified++
    return { isValid: true, payer: PAYER }
  },
  settle: async (payload, requirements): Promise<FacilitatorSettleResponse> => {
    const amount = (requirements as { amount: string }).amount
    const nonce = String((payload.payload as { permit2Authorization?: { nonce?: string } }).permit2Authorization?.nonce)
    settles.push({ amount, nonce })
    // a settle takes a moment: replicas racing for one debt overlap in it
    await new Promise((r) => setTimeout(r, 20))
    const base = { network: 'eip155:8453', payer: PAYER }
    switch (script) {
      case 'ok':
        return { ...base, success: true, transaction: tx(), amount }
      case 'refused':
        return { ...base, success: false, errorReason: 'permit2_insufficient_balance', transaction: '' }
      case 'pending':
        return { ...base, success: false, errorReason: 'settlement_pending', errorMessage: 'receipt wait timed out', transaction: tx() }
      case 'lost':
        throw new FacilitatorUnavailableError('settle', new Error('socket hang up'))
    }
  },
}

const x402 = readX402Config({ SERVICE_X402__PAY_TO_EVM: PAY_TO, FACILITATOR_TOKEN: 't', SERVICE_X402__UPTO_FACILITATOR_ADDRESS: FACILITATOR })
const tokenPricing = { perTokenMicro: 3_000_000n, minAtomic: 5n, maxAtomic: 300n }
const info = (wallet = WALLET) => ({ wallet, route: 'llmChat', method: 'POST', path: '/llm/chat' })

/** A well-formed `upto` header (the scripted facilitator accepts any signature) valid for `validS` seconds. */
const uptoHeader = (o: { validS?: number; from?: string; amount?: string } = {}): Record<string, string> => uptoPermitHeader({ ...o, now: now() }).headers

/** An `exact` (EIP-3009) header valid for `validS` seconds. */
function exactHeader(validS: number): Record<string, string> {
  const payload = {
    x402Version: 2,
    accepted: { scheme: 'exact', network: 'eip155:8453' },
    payload: {
      signature: '0x' + '22'.repeat(65),
      authorization: { from: PAYER, to: PAY_TO, value: '1000', validAfter: '0', validBefore: String(now() + validS), nonce: `0x${randomBytes(32).toString('hex')}` },
    },
  }
  return { 'payment-signature': Buffer.from(JSON.stringify(payload)).toString('base64') }
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as InvalidPaymentError,
  )

describe.each(dialects)('cost payments on %s', (dialect) => {
  let db: TestDatabase
  /** Two replicas on one database (each its own lease name). */
  let one: CostPayments
  let two: CostPayments
  const replica = (instanceId: string) =>
    new CostPayments({ db: db.db, x402, priceAtomic: 1_000n, tokenPricing, publicOrigin: 'http://gw.test', facilitator, maxCallS: 120, instanceId })

  beforeAll(async () => {
    db = await createTestDatabase(dialect)
    one = replica('replica-one')
    two = replica('replica-two')
  })
  afterAll(async () => db?.close())
  beforeEach(async () => {
    script = 'ok'
    verified = 0
    settles = []
    await db.db.deleteFrom('settlement_debts').execute()
  })

  /** A paid `upto` call that produced `tokens` and was served, whose settlement the facilitator answers with `then`. */
  async function servedCall(then: SettleScript, tokens = 40, who: { wallet?: string; from?: string } = {}): Promise<PaidCall> {
    const paid = await one.begin(uptoHeader({ from: who.from ?? PAYER }), info(who.wallet ?? WALLET))
    script = then
    await refusal(paid.settle(tokens))
    return paid
  }

  describe('a payment must cover the longest call plus its settlement', () => {
    it('an upto permit a few seconds from its deadline is refused before the facilitator hears of it: 402 payment_expires_too_soon with the minimum', async () => {
      const error = await refusal(one.begin(uptoHeader({ validS: 20 }), info()))
      expect(error).toBeInstanceOf(InvalidPaymentError)
      expect(error?.code).toBe('payment_expires_too_soon')
      expect(error?.meta).toMatchObject({ reason: 'authorization_expires_too_soon', min_validity_s: 135, max_call_s: 120, settle_margin_s: 15 })
      expect(error?.shortMessage).toContain('at least 135 s')
      expect(verified).toBe(0)
      // the 402 says it in the spec's shape, the minimum in `details`
      const answer = one.refused(info(), error as InvalidPaymentError)
      expect(answer.body).toMatchObject({ error: 'payment_expires_too_soon', details: { min_validity_s: 135 } })
    })

    it('an exact authorization whose validBefore is that close is refused the same way', async () => {
      const error = await refusal(one.begin(exactHeader(60), info()))
      expect(error?.code).toBe('payment_expires_too_soon')
      expect(verified).toBe(0)
    })

    it('one valid long enough is accepted, and its call knows when it must have settled (deadline minus the margin)', async () => {
      const header = uptoHeader({ validS: 140 })
      const paid = await one.begin(header, info())
      const deadline = Number(JSON.parse(Buffer.from(header['payment-signature']!, 'base64').toString()).payload.permit2Authorization.deadline)
      expect(paid.settleDeadlineMs).toBe(deadline * 1000 - 15_000)
      await paid.release()
      const exact = await one.begin(exactHeader(600), info())
      expect(exact.settleDeadlineMs).toBeGreaterThan(Date.now() + 500_000)
      await exact.release()
    })

    it('the 402 offers a maxTimeoutSeconds that covers the window (stock clients sign that validity)', () => {
      for (const r of one.requirements(info())) expect(r.maxTimeoutSeconds).toBe(165)
    })
  })

  describe('a settlement that fails after the call was served is a debt of the payer', () => {
    it('is recorded with the amount served (never above the permit), and refuses the payer and the wallet further paid calls: 402 settlement_owed', async () => {
      const paid = await servedCall('refused', 40)
      const debt = await one.debts.get(paid.paymentId)
      expect(debt).toMatchObject({ status: 'owed', payer: PAYER.toLowerCase(), amount_atomic: '120', cap_atomic: '300', payer_fault: 1 })
      verified = 0
      const again = await refusal(one.begin(uptoHeader(), info()))
      expect(again?.code).toBe('settlement_owed')
      expect(again?.meta).toMatchObject({ payment_id: paid.paymentId, amount_atomic: '120', status: 'owed' })
      // another replica refuses it too, and so the same payer paying for another wallet, and another payer for this wallet
      expect((await refusal(two.begin(uptoHeader(), info(OTHER_WALLET))))?.code).toBe('settlement_owed')
      expect((await refusal(two.begin(uptoHeader({ from: OTHER_PAYER }), info())))?.code).toBe('settlement_owed')
      expect((await refusal(one.begin(exactHeader(600), info())))?.code).toBe('settlement_owed')
      expect(verified).toBe(0)
      expect(one.refused(info(), again as InvalidPaymentError).body).toMatchObject({ error: 'settlement_owed', details: { payment_id: paid.paymentId, status: 'owed' } })
      // a payer with no debt, for a wallet with none, is served
      const clean = await one.begin(uptoHeader({ from: OTHER_PAYER }), info(OTHER_WALLET))
      await clean.release()
    })

    it('a settle whose outcome is unknown, or that x402 reports pending, is a pending debt', async () => {
      const lost = await servedCall('lost')
      expect(await one.debts.get(lost.paymentId)).toMatchObject({ status: 'pending', tx_hash: null, payer_fault: 0 })
      await db.db.deleteFrom('settlement_debts').execute()
      const pending = await servedCall('pending')
      expect(await one.debts.get(pending.paymentId)).toMatchObject({ status: 'pending', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    })

    it('an answer withheld because its settlement failed owes nothing', async () => {
      const paid = await one.begin(uptoHeader(), info())
      script = 'refused'
      await refusal(paid.settle(40, { delivered: false }))
      expect(await one.debts.get(paid.paymentId)).toBeUndefined()
      const next = await one.begin(uptoHeader(), info())
      await next.release()
    })
  })

  describe('reconciliation', () => {
    it('settles the debt exactly once, with the amount served, even with two replicas racing; the payer is served again', async () => {
      const paid = await servedCall('refused', 40)
      settles = []
      script = 'ok'
      const results = await Promise.all([one.reconciler.reconcile(paid.paymentId), two.reconciler.reconcile(paid.paymentId), one.reconciler.reconcile(paid.paymentId)])
      expect(settles).toEqual([{ amount: '120', nonce: expect.any(String) }])
      expect(results.filter((r) => r?.status === 'settled')).toHaveLength(1)
      const debt = await one.debts.get(paid.paymentId)
      expect(debt).toMatchObject({ status: 'settled', resolution: 'settled_on_retry', tx_hash: expect.stringMatching(/^0x/) })
      expect(await one.ledger.get(paid.paymentId)).toMatchObject({ status: 'settled', tx_hash: debt?.tx_hash })
      // closed: neither replica settles it again
      expect(await two.reconciler.reconcile(paid.paymentId)).toBeUndefined()
      expect(await one.reconciler.reconcileDue()).toBe(0)
      expect(settles).toHaveLength(1)
      const next = await two.begin(uptoHeader(), info())
      await next.release()
    })

    it('a refused retry keeps the debt (and the refusal) until a later one settles; due debts wait their backoff', async () => {
      const paid = await servedCall('refused')
      await db.db.updateTable('settlement_debts').set({ next_attempt_at: 0 }).execute()
      expect(await one.reconciler.reconcileDue()).toBe(1)
      expect(await one.debts.get(paid.paymentId)).toMatchObject({ status: 'owed', attempts: 2 })
      expect(await one.reconciler.reconcileDue()).toBe(0) // not due before its backoff
      script = 'ok'
      await db.db.updateTable('settlement_debts').set({ next_attempt_at: 0 }).execute()
      expect(await two.reconciler.reconcileDue()).toBe(1)
      expect(await one.debts.get(paid.paymentId)).toMatchObject({ status: 'settled' })
    })

    it('a pending debt, without a chain to read, is settled again with the identical request (x402: the facilitator reconciles its broadcast)', async () => {
      const paid = await servedCall('pending', 10)
      const first = settles[0]
      settles = []
      script = 'ok'
      await one.reconciler.reconcile(paid.paymentId)
      expect(settles).toEqual([first])
      expect(await one.debts.get(paid.paymentId)).toMatchObject({ status: 'settled' })
    })

    it('at its deadline an owed debt closes: defaulted (still refusing the payer) when the payer took the money away, else forgiven', async () => {
      const theirs = await servedCall('refused')
      const ours = await servedCall('lost', 40, { wallet: OTHER_WALLET, from: OTHER_PAYER })
      // `lost` was sent: its outcome is unknown, so only an owed debt (nothing can have landed) closes blind
      await db.db.updateTable('settlement_debts').set({ valid_until: now() - 1, status: 'owed' }).execute()
      await one.reconciler.reconcile(theirs.paymentId)
      await two.reconciler.reconcile(ours.paymentId)
      expect(await one.debts.get(theirs.paymentId)).toMatchObject({ status: 'defaulted', resolution: 'payer_default' })
      expect(await one.debts.get(ours.paymentId)).toMatchObject({ status: 'forgiven', resolution: 'unsettleable' })
      expect((await refusal(one.begin(uptoHeader(), info())))?.code).toBe('settlement_owed')
      // an operator may forgive the default, once (two replicas at once: one wins)
      expect(await Promise.all([one.debts.forgive(theirs.paymentId), two.debts.forgive(theirs.paymentId)])).toEqual(expect.arrayContaining([true, false]))
      const next = await one.begin(uptoHeader(), info())
      await next.release()
    })
  })
})
