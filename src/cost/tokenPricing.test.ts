import { describe, expect, it } from 'vitest'
import { maxTokensFor, meteredAmount, parsePerTokenMicro } from './tokenPricing.js'

const pricing = (perToken: string, minAtomic = 0n, maxAtomic = 1_000n) => ({ perTokenMicro: parsePerTokenMicro(perToken)!, minAtomic, maxAtomic })

describe('metered price of a cost call', () => {
  it('is tokens × price, a fraction of an atomic unit rounded up', () => {
    expect(meteredAmount(pricing('3'), 7, 1_000n)).toBe(21n)
    expect(meteredAmount(pricing('0.25'), 7, 1_000n)).toBe(2n) // 1.75 → 2
    expect(meteredAmount(pricing('0.25'), 8, 1_000n)).toBe(2n) // exactly 2
    expect(meteredAmount(pricing('0.000001'), 1, 1_000n)).toBe(1n)
  })
  it('is at least the minimum (zero tokens included) and never above the authorised cap', () => {
    expect(meteredAmount(pricing('3', 10n), 0, 1_000n)).toBe(10n)
    expect(meteredAmount(pricing('3', 10n), 2, 1_000n)).toBe(10n)
    expect(meteredAmount(pricing('3'), 1_000_000, 50n)).toBe(50n)
    expect(meteredAmount(pricing('3'), -5, 50n)).toBe(0n)
  })
  it('caps generation so tokens × price never exceeds the cap', () => {
    expect(maxTokensFor(pricing('3'), 50n)).toBe(16)
    expect(meteredAmount(pricing('3'), maxTokensFor(pricing('3'), 50n), 50n)).toBeLessThanOrEqual(50n)
    expect(maxTokensFor(pricing('0.25'), 3n)).toBe(12)
  })
  it('parses prices with up to six decimals only', () => {
    expect(parsePerTokenMicro('1')).toBe(1_000_000n)
    expect(parsePerTokenMicro('0.5')).toBe(500_000n)
    for (const bad of ['', '-1', '1e3', '0.1234567', 'abc', '1.']) expect(parsePerTokenMicro(bad)).toBeUndefined()
  })
})
