import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../../config/ConfigError.js'
import { nativeAlgoAmount, parseAlgoUsdRate } from './nativeAlgoAmount.js'

describe('native ALGO at the operator-set rate', () => {
  it('reads USD per ALGO exactly and refuses nonsense at start', () => {
    expect(parseAlgoUsdRate(undefined)).toBeUndefined()
    expect(parseAlgoUsdRate('')).toBeUndefined()
    expect(parseAlgoUsdRate('0.18')?.microUsdPerAlgo).toBe(180_000n)
    expect(parseAlgoUsdRate('2')?.microUsdPerAlgo).toBe(2_000_000n)
    for (const bad of ['0', '0.0000001', '-1', 'abc', '1e3', '0.000000']) expect(() => parseAlgoUsdRate(bad)).toThrow(ConfigError)
  })
  it('rounds up, so a native payment never pays less than the price', () => {
    const rate = parseAlgoUsdRate('0.18')!
    for (const price of [1n, 5_000n, 5_012n, 1_000_000n, 123_456_789n]) {
      const micro = nativeAlgoAmount(price, rate)
      expect(micro * rate.microUsdPerAlgo).toBeGreaterThanOrEqual(price * 1_000_000n)
      expect((micro - 1n) * rate.microUsdPerAlgo).toBeLessThan(price * 1_000_000n)
    }
    expect(nativeAlgoAmount(1_000_000n, parseAlgoUsdRate('1')!)).toBe(1_000_000n)
  })
})
