import { describe, expect, it } from 'vitest'
import { InvalidPaymentError, PaymentHeaderInvalidError } from '../../errors.js'
import { facilitatorRequest, parseEvmPayment, precheckEvmPayment } from './evmRail.js'
import type { PaymentPayload } from '../../headers.js'
import type { PaymentRequirement } from '../../requirements.js'

const PAY_TO = '0x' + '2'.repeat(40)
const ASSET = '0x' + '1'.repeat(40)
const NOW = 1_700_000_000
const requirement: PaymentRequirement = {
  scheme: 'exact', network: 'eip155:8453', amount: '5000', maxAmountRequired: '5000', resource: 'http://x/store',
  description: 'd', mimeType: 'application/octet-stream', payTo: PAY_TO, maxTimeoutSeconds: 60, asset: ASSET,
  extra: { name: 'USD Coin', version: '2' },
}
function make(over: { accepted?: Record<string, unknown>; auth?: Record<string, unknown>; signature?: unknown } = {}): PaymentPayload {
  return {
    x402Version: 2,
    accepted: { ...requirement, ...over.accepted } as PaymentPayload['accepted'],
    payload: {
      signature: 'signature' in over ? over.signature : '0x' + 'ab'.repeat(65),
      authorization: {
        from: '0x' + '9'.repeat(40), to: PAY_TO, value: '5000', validAfter: '0', validBefore: String(NOW + 60),
        nonce: '0x' + '0f'.repeat(32), ...over.auth,
      },
    },
  }
}
const reason = (fn: () => void) => {
  try {
    fn()
  } catch (e) {
    if (e instanceof InvalidPaymentError) return e.reason
    throw e
  }
  return 'ok'
}
const check = (p: PaymentPayload) => reason(() => precheckEvmPayment(p, parseEvmPayment(p), requirement, NOW))

describe('EVM precheck', () => {
  it('accepts a matching payload, and one that pays more', () => {
    expect(check(make())).toBe('ok')
    expect(check(make({ auth: { value: '6000' } }))).toBe('ok')
  })
  it.each([
    [{ accepted: { network: 'eip155:1' } }, 'network_mismatch'],
    [{ accepted: { asset: '0x' + '4'.repeat(40) } }, 'asset_mismatch'],
    [{ accepted: { payTo: '0x' + '4'.repeat(40) } }, 'pay_to_mismatch'],
    [{ auth: { to: '0x' + '4'.repeat(40) } }, 'receiver_mismatch'],
    [{ auth: { value: '4999' } }, 'amount_insufficient'],
    [{ auth: { validBefore: String(NOW) } }, 'authorization_expired'],
    [{ auth: { validAfter: String(NOW + 100) } }, 'authorization_not_yet_valid'],
    [{ signature: '0x1234' }, 'malformed_signature'],
    [{ signature: 'zz' + 'ab'.repeat(65) }, 'malformed_signature'],
    [{ accepted: { scheme: 'upto' } }, 'scheme_mismatch'],
  ])('rejects %j with %s', (over, expected) => {
    expect(check(make(over))).toBe(expected)
  })
  it('matches addresses case-insensitively', () => {
    expect(check(make({ auth: { to: PAY_TO.toUpperCase().replace('0X', '0x') } }))).toBe('ok')
  })
  it('rejects structurally broken payloads with 400', () => {
    expect(() => parseEvmPayment(make({ signature: 5 }))).toThrow(PaymentHeaderInvalidError)
    expect(() => parseEvmPayment(make({ auth: { nonce: '0x12' } }))).toThrow(/nonce/)
    expect(() => parseEvmPayment(make({ auth: { value: '-1' } }))).toThrow(/value/)
    expect(() => parseEvmPayment(make({ auth: { from: 'nope' } }))).toThrow(/from/)
  })
  it('sends the authorised amount to the facilitator', () => {
    const p = make({ auth: { value: '7000' } })
    const sent = facilitatorRequest({ version: 2, payload: p, raw: p }, requirement, parseEvmPayment(p))
    expect(sent).toMatchObject({ x402Version: 2, paymentPayload: p, paymentRequirements: { amount: '7000', maxAmountRequired: '7000' } })
  })
  it('sends a v1 payment as sent, in v1 terms', () => {
    const p = make({ auth: { value: '7000' } })
    const raw = { x402Version: 1, scheme: 'exact', network: 'base', payload: p.payload }
    const sent = facilitatorRequest({ version: 1, payload: p, raw }, requirement, parseEvmPayment(p))
    expect(sent).toMatchObject({ x402Version: 1, paymentPayload: raw, paymentRequirements: { network: 'base', maxAmountRequired: '7000' } })
  })
  it('sends the v1 facilitator the network the pre-check passed, whatever else the payload names', () => {
    const p = make()
    // pre-checked on eip155:8453; the raw payload names ethereum at the top level
    const raw = { x402Version: 1, scheme: 'exact', network: 'ethereum', accepted: { network: 'base' }, payload: p.payload }
    const sent = facilitatorRequest({ version: 1, payload: p, raw }, requirement, parseEvmPayment(p))
    expect(sent.paymentRequirements.network).toBe('base')
    expect((sent.paymentPayload as { network?: string }).network).toBe('base')
  })
})
