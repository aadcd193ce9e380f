import { describe, expect, it } from 'vitest'
import type { FacilitatorSettleResponse } from './FacilitatorClient.js'
import type { PaymentPayload } from './headers.js'
import { settleWithPendingRetry } from './settleWithPendingRetry.js'

const pending: FacilitatorSettleResponse = { success: false, errorReason: 'settlement_pending', transaction: '0xabc', network: 'eip155:8453' }
const settled: FacilitatorSettleResponse = { success: true, transaction: '0xabc', network: 'eip155:8453' }
const refused: FacilitatorSettleResponse = { success: false, errorReason: 'invalid_exact_evm_nonce_already_used', transaction: '', network: 'eip155:8453' }

/** A facilitator answering `answers` in turn, recording the payloads it was sent. */
function facilitator(answers: FacilitatorSettleResponse[]) {
  const sent: unknown[] = []
  return {
    sent,
    verify: () => Promise.reject(new Error('not asked')),
    settle: (payload: PaymentPayload) => {
      sent.push(payload)
      return Promise.resolve(answers[sent.length - 1] as FacilitatorSettleResponse)
    },
  }
}

const payload = { x402Version: 2, accepted: { network: 'eip155:8453' }, payload: {} } as PaymentPayload

describe('x402 pending settlement retry', () => {
  it('retries a settlement_pending once with the identical payload and returns the reconciled answer', async () => {
    const f = facilitator([pending, settled])
    expect(await settleWithPendingRetry(f, payload, {})).toEqual(settled)
    expect(f.sent).toEqual([payload, payload])
  })

  it('never retries twice: a second settlement_pending is returned as is', async () => {
    const f = facilitator([pending, pending, settled])
    expect(await settleWithPendingRetry(f, payload, {})).toEqual(pending)
    expect(f.sent).toHaveLength(2)
  })

  it('a retry that is refused or not answered leaves the settlement pending (the broadcast may land)', async () => {
    expect(await settleWithPendingRetry(facilitator([pending, refused]), payload, {})).toEqual(pending)
    const unreachable = { ...facilitator([pending]), settle: (() => {
      let calls = 0
      return () => (calls++ === 0 ? Promise.resolve(pending) : Promise.reject(new Error('connection reset')))
    })() }
    expect(await settleWithPendingRetry(unreachable, payload, {})).toEqual(pending)
  })

  it('does not retry a settlement or a refusal', async () => {
    for (const answer of [settled, refused]) {
      const f = facilitator([answer, settled])
      expect(await settleWithPendingRetry(f, payload, {})).toEqual(answer)
      expect(f.sent).toHaveLength(1)
    }
  })
})
