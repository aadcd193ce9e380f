import { describe, expect, it } from 'vitest'
import { PaymentHeaderInvalidError } from './errors.js'
import { decodeBase64Json, decodePaymentHeader, encodeBase64Json } from './headers.js'

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64')
const payload = (network: string) => ({ x402Version: 2, accepted: { scheme: 'exact', network }, payload: { txId: 'x' } })

describe('decodePaymentHeader', () => {
  it('returns null without a header', () => {
    expect(decodePaymentHeader({})).toBeNull()
  })
  it('PAYMENT-SIGNATURE wins over X-PAYMENT', () => {
    const d = decodePaymentHeader({ 'payment-signature': b64(payload('eip155:1')), 'x-payment': b64(payload('eip155:8453')) })
    expect(d?.network).toBe('eip155:1')
    expect(d?.header).toBe('PAYMENT-SIGNATURE')
  })
  it('accepts X-PAYMENT alone and a v1 top-level network', () => {
    const d = decodePaymentHeader({ 'x-payment': b64({ x402Version: 1, scheme: 'exact', network: 'eip155:8453', payload: {} }) })
    expect(d?.network).toBe('eip155:8453')
    expect(d?.header).toBe('X-PAYMENT')
  })
  it('refuses a v1 payload whose top-level network differs from accepted.network', () => {
    const confused = { x402Version: 1, scheme: 'exact', network: 'ethereum', accepted: { scheme: 'exact', network: 'base' }, payload: {} }
    expect(() => decodePaymentHeader({ 'x-payment': b64(confused) })).toThrow(/differs from accepted.network/)
    expect(() => decodePaymentHeader({ 'x-payment': b64({ ...confused, network: 'eip155:1' }) })).toThrow(PaymentHeaderInvalidError)
    expect(() => decodePaymentHeader({ 'x-payment': b64({ ...confused, network: 42 }) })).toThrow(PaymentHeaderInvalidError)
    expect(() => decodePaymentHeader({ 'x-payment': b64({ ...confused, network: 'base', scheme: 'upto' }) })).toThrow(/scheme/)
    // the same network under its two names is one network
    expect(decodePaymentHeader({ 'x-payment': b64({ ...confused, network: 'eip155:8453' }) })?.network).toBe('eip155:8453')
  })
  it('accepts base64url', () => {
    const text = Buffer.from(JSON.stringify(payload('eip155:1'))).toString('base64url')
    expect(decodePaymentHeader({ 'payment-signature': text })?.network).toBe('eip155:1')
  })
  it.each([
    ['!!!notbase64', /not base64/],
    [Buffer.from('{nope').toString('base64'), /not base64 of JSON/],
    [b64([1, 2]), /JSON object/],
    [b64({ x402Version: 3, accepted: { network: 'a' }, payload: {} }), /x402Version/],
    [b64({ x402Version: 2, accepted: { network: 'a' } }), /missing field payload/],
    [b64({ x402Version: 2, payload: {} }), /missing field accepted/],
    [b64({ x402Version: 2, accepted: {}, payload: {} }), /accepted.network/],
    ['', /empty/],
  ])('rejects %s with a message saying what is wrong', (text, message) => {
    let error: unknown
    try {
      decodePaymentHeader({ 'payment-signature': text })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(PaymentHeaderInvalidError)
    expect((error as Error).message).toMatch(message)
    expect((error as PaymentHeaderInvalidError).code).toBe('invalid_payment_header')
  })
})

describe('base64 JSON codec', () => {
  it('round-trips and stringifies bigints', () => {
    const text = encodeBase64Json({ a: 1n, b: 'x' })
    expect(decodeBase64Json(text, 'h')).toEqual({ a: '1', b: 'x' })
  })
})
