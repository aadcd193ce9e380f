import { PaymentRequiredV1Schema, PaymentRequiredV2Schema } from '@x402/core/schemas'
import { validateAndExtract } from '@x402/extensions/bazaar'
import { describe, expect, it } from 'vitest'
import { bazaarExtensions } from './bazaar.js'
import { buildPaymentRequired, paymentRequiredAnswer } from './paymentRequired.js'
import { buildRequirements } from './rails/buildRequirements.js'
import { resourceInfo } from './requirements.js'

const input = {
  resourceUrl: 'http://localhost:8000/store',
  sizeBytes: 11n,
  sha256Hex: 'ab'.repeat(32),
  mimeType: 'text/plain',
  priceAtomic: 5_000n,
  priceUsd: '0.005',
  evm: [
    { network: 'eip155:8453', asset: '0x' + '1'.repeat(40), payTo: '0x' + '2'.repeat(40), name: 'USD Coin', version: '2' },
    { network: 'eip155:1', asset: '0x' + '3'.repeat(40), payTo: '0x' + '2'.repeat(40), name: 'USD Coin', version: '2' },
  ],
  algorand: { network: 'algorand:GENESIS', payTo: 'A'.repeat(58) },
}
const extensions = bazaarExtensions({
  method: 'POST',
  bodyType: 'form-data',
  input: { file: 'hello' },
  inputSchema: { properties: { file: { type: 'string' } }, required: ['file'] },
  outputExample: { arTxId: 'x' },
})
const quote = { resource: resourceInfo(input), accepts: buildRequirements(input), extensions }

describe('the 402 body', () => {
  it('v2: the seed fields plus resource and extensions, valid for the reference v2 schema', () => {
    const body = buildPaymentRequired(quote)
    expect(body).toMatchObject({ x402Version: 2, error: null, resource: { url: 'http://localhost:8000/store', mimeType: 'text/plain' } })
    expect(body.accepts).toHaveLength(3)
    expect(PaymentRequiredV2Schema.safeParse(body).success).toBe(true)
    expect(validateAndExtract(body.extensions!.bazaar as never)).toMatchObject({ valid: true, info: { input: { type: 'http', method: 'POST', bodyType: 'form-data' } } })
  })

  it('v1: only networks v1 clients know, renamed, error a string; valid for the reference v1 schema', () => {
    const body = buildPaymentRequired({ ...quote, version: 1 })
    expect(body.x402Version).toBe(1)
    expect(body.accepts.map((a) => a.network)).toEqual(['base'])
    expect(typeof body.error).toBe('string')
    expect(body).not.toHaveProperty('resource')
    expect(PaymentRequiredV1Schema.safeParse(body).success).toBe(true)
  })

  it('a refusal carries the reason and a message, and PAYMENT-REQUIRED is the same JSON', () => {
    const answer = paymentRequiredAnswer({ ...quote, error: 'insufficient_amount', message: 'authorization.value 1 is below the price 5000' })
    expect(answer.status).toBe(402)
    expect(answer.body).toMatchObject({ error: 'insufficient_amount', message: expect.stringContaining('below') })
    expect(JSON.parse(Buffer.from(answer.headers['PAYMENT-REQUIRED']!, 'base64').toString())).toEqual(answer.body)
    expect(PaymentRequiredV2Schema.safeParse(answer.body).success).toBe(true)
  })
})
