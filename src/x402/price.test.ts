import { describe, expect, it } from 'vitest'
import { computePrice, formatPriceUsd, parseDecimal } from './price.js'

describe('parseDecimal', () => {
  it('parses integers, fractions and exponents exactly', () => {
    expect(parseDecimal('12.5')).toEqual({ n: 125n, d: 10n })
    expect(parseDecimal(3)).toEqual({ n: 3n, d: 1n })
    expect(parseDecimal(1e-7)).toEqual({ n: 1n, d: 10_000_000n })
    expect(parseDecimal('2E3')).toEqual({ n: 2000n, d: 1n })
    expect(parseDecimal('.25')).toEqual({ n: 25n, d: 100n })
  })
  it('rejects negatives and garbage', () => {
    expect(() => parseDecimal('-1')).toThrow()
    expect(() => parseDecimal('abc')).toThrow()
    expect(() => parseDecimal(Number.NaN)).toThrow()
  })
})

describe('formatPriceUsd', () => {
  it('prints the shortest decimal with one fractional digit at least', () => {
    expect(formatPriceUsd(5_000n)).toBe('0.005')
    expect(formatPriceUsd(1_000_000n)).toBe('1.0')
    expect(formatPriceUsd(1_234_560n)).toBe('1.23456')
    expect(formatPriceUsd(1n)).toBe('0.000001')
    expect(formatPriceUsd(12_000_001n)).toBe('12.000001')
  })
})

describe('computePrice', () => {
  // 1 GiB costs 1e12 winc; 1e12 winc cost 10 USD; so 1 MiB costs 1e12/1024 winc.
  const base = { wincPerMiB: 976_562_500n, rateWinc: 1_000_000_000_000n, rateUsd: '10' }

  it('charges only the 0.005 floor for a tiny file', () => {
    // cost(1 byte) = 10/1024/1048576 ≈ 9.3e-9 USD → ×1.25 ≈ 1.16e-8 → +0.005 → 0.005000 after rounding
    const p = computePrice({ ...base, sizeBytes: 1n })
    expect(p.atomic).toBe(5_000n)
    expect(p.usd).toBe('0.005')
  })

  it('follows the formula for 1 MiB exactly', () => {
    // cost = 10/1024 = 0.009765625 USD; ×1.25 = 0.01220703125; +0.005 = 0.01720703125 → 0.017207
    const p = computePrice({ ...base, sizeBytes: 1_048_576n })
    expect(p.atomic).toBe(17_207n)
    expect(p.usd).toBe('0.017207')
    expect(p.upstreamCostUsd.n * 1024n).toBe(p.upstreamCostUsd.d * 10n)
  })

  it('rounds half up at the sixth decimal', () => {
    // choose cost×1.25 = 0.0000005 exactly: cost = 4e-7 USD; with usd_per_byte = 1e-7 → 4 bytes.
    // wincPerMiB = MIB, rateWinc = 1e7, usd = 1 → usd per byte = 1/1e7.
    const p = computePrice({ wincPerMiB: 1_048_576n, rateWinc: 10_000_000n, rateUsd: '1', sizeBytes: 4n })
    // 0.0000005 + 0.005 = 0.0050005 → half-up → 0.005001
    expect(p.atomic).toBe(5_001n)
    const below = computePrice({ wincPerMiB: 1_048_576n, rateWinc: 10_000_000n, rateUsd: '1', sizeBytes: 3n })
    // 3.75e-7 + 0.005 → 0.005000375 → 0.005000
    expect(below.atomic).toBe(5_000n)
  })

  it('is exact where floats are not (0.1 + 0.2 style inputs)', () => {
    const p = computePrice({ wincPerMiB: 1_048_576n, rateWinc: 1n, rateUsd: '0.000000123456789', sizeBytes: 10_000_000_000n })
    // cost = 1234.56789 USD → ×1.25 = 1543.2098625 → +0.005 = 1543.2148625 → 1543.214863 (half-up)
    expect(p.atomic).toBe(1_543_214_863n)
    expect(p.usd).toBe('1543.214863')
  })

  it('handles a 200 MB file and a number-typed fiat rate', () => {
    const p = computePrice({ ...base, rateUsd: 10, sizeBytes: 200_000_000n })
    // cost = 10 × 200e6 / (1024 × 1048576) = 1.862645149230957… → ×1.25 = 2.3283064365386963 → +0.005 → 2.333306
    expect(p.atomic).toBe(2_333_306n)
  })

  it('rejects a zero rate', () => {
    expect(() => computePrice({ ...base, rateWinc: 0n, sizeBytes: 1n })).toThrow()
  })
})
