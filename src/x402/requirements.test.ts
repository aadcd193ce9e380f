import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseAlgoUsdRate } from './rails/algorand/nativeAlgoAmount.js'
import { buildRequirements } from './rails/buildRequirements.js'
import { requestBindingNote, requestBindingNotes, requestBindingText, resourceInfo } from './requirements.js'

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
  algorand: { network: 'algorand:GENESIS', payTo: 'ALGOADDR' },
}

describe('buildRequirements', () => {
  const body = { accepts: buildRequirements(input) }
  it('lists the three rails in order with both amount names', () => {
    expect(body.accepts.map((a) => a.network)).toEqual(['eip155:8453', 'eip155:1', 'algorand:GENESIS'])
    for (const a of body.accepts) {
      expect(a.amount).toBe('5000')
      expect(a.maxAmountRequired).toBe('5000')
      expect(a.scheme).toBe('exact')
      expect(a.resource).toBe('http://localhost:8000/store')
      expect(a.maxTimeoutSeconds).toBe(60)
      expect(a.description).toContain('11 bytes')
      expect(a.mimeType).toBe('text/plain')
    }
    expect(resourceInfo(input)).toEqual({ url: 'http://localhost:8000/store', description: body.accepts[0]!.description, mimeType: 'text/plain' })
  })
  it('carries the domain on EVM entries and the binding on Algorand', () => {
    expect(body.accepts[0]!.extra).toEqual({ name: 'USD Coin', version: '2' })
    expect(body.accepts[2]!.asset).toBe('31566704')
    expect(body.accepts[2]!.extra).toEqual({ requestHashBinding: true, nativeAlgo: null })
  })
  it('states the micro-ALGO a native payment must reach when the operator set an ALGO price', () => {
    const withRate = buildRequirements({ ...input, algorand: { ...input.algorand, algoUsdRate: parseAlgoUsdRate('0.18')! } })
    // 5000 micro-USD / 0.18 USD per ALGO = 27,777.7… micro-ALGO, rounded up
    expect(withRate[2]!.extra).toEqual({ requestHashBinding: true, nativeAlgo: { amount: '27778', algoUsdRate: '0.18' } })
    expect(withRate[2]!.asset).toBe('31566704')
  })
  it('builds the binding text and note', () => {
    expect(requestBindingText('u', 'h', 3n, '0.005')).toBe('u|h|3|0.005')
    expect(requestBindingNote('u', 'h', 3n, '0.005')).toHaveLength(32)
    const expected = createHash('sha256').update(`u|h|3|0.005`).digest('hex')
    expect(Buffer.from(requestBindingNote('u', 'h', 3n, '0.005')).toString('hex')).toBe(expected)
  })
  it('accepts the price written canonically, with six decimals, or as whole dollars', () => {
    const hex = (t: string) => createHash('sha256').update(`u|h|3|${t}`).digest('hex')
    const notes = (atomic: bigint) => requestBindingNotes('u', 'h', 3n, atomic).map((n) => Buffer.from(n).toString('hex'))
    expect(notes(5_000n)).toEqual([hex('0.005'), hex('0.005000')])
    expect(notes(2_000_000n)).toEqual([hex('2.0'), hex('2.000000'), hex('2')])
  })
})
