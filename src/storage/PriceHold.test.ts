import { describe, expect, it } from 'vitest'
import { PriceHold, type PricingSnapshot } from './PriceHold.js'

const snap = (at: number, usd: number): PricingSnapshot => ({ at, rates: { winc: 2_000_000_000_000n, usd }, wincPerMiB: 1_953_125_000n })

describe('PriceHold', () => {
  it('honours a quoted price for the hold time even when the rates rise, then lets it go', () => {
    const hold = new PriceHold(300_000)
    const cheap = snap(1_000, 10)
    expect(hold.quoted(cheap, 1_000)).toBe(301_000)
    const dear = snap(40_000, 20)
    const size = 50_000_000n
    const atFirst = hold.acceptablePrices(dear, size, 100_000).map((p) => p.atomic)
    expect(atFirst).toHaveLength(2)
    expect(atFirst[0]! < atFirst[1]!).toBe(true)
    expect(hold.acceptablePrices(dear, size, 301_001).map((p) => p.atomic)).toEqual([atFirst[1]])
  })

  it('a re-quote of the same snapshot extends its hold', () => {
    const hold = new PriceHold(10)
    const s = snap(5, 10)
    hold.quoted(s, 0)
    hold.quoted(s, 8)
    expect(hold.honoured(15)).toEqual([s])
    expect(hold.honoured(19)).toEqual([])
  })
})
