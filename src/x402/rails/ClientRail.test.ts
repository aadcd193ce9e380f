import { describe, expect, it } from 'vitest'
import { type ClientPayInput, DEFAULT_MAX_USD, refuseAboveMaxUsd } from './ClientRail.js'

/** A quote of `amount` atomic USDC (6 decimals), as the CLI hands it to a rail's payer. */
const input = (amount: string, maxUsd?: string) =>
  ({
    offered: { amount, asset: '0xusdc', network: 'eip155:8453' },
    describeAmount: (a: string) => `${(Number(a) / 1e6).toFixed(6)} USDC`,
    maxUsd,
  }) as unknown as ClientPayInput

describe('refuseAboveMaxUsd: the largest payment the user lets the CLI sign', () => {
  it('with --max-usd: above it is refused in the option\'s words; up to it passes', () => {
    expect(() => refuseAboveMaxUsd(input('5012', '0.001'))).toThrow('cannot pay this quote: 0.005012 USDC is above --max-usd 0.001')
    expect(() => refuseAboveMaxUsd(input('1000', '0.001'))).not.toThrow()
  })

  it("without it: the default cap, said as the option a user can pass (not the library's spendControls advice)", () => {
    expect(DEFAULT_MAX_USD).toBe('1')
    expect(() => refuseAboveMaxUsd(input('25000000'))).toThrow('cannot pay this quote: 25.000000 USDC is above the default --max-usd of 1; pass --max-usd <amount> to pay it')
    expect(() => refuseAboveMaxUsd(input('1000000'))).not.toThrow()
  })
})
