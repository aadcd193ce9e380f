import { describe, expect, it } from 'vitest'
import { formatAmount, unitOfCurrency, unitOfRequirement } from './formatAmount.js'

describe('formatAmount', () => {
  it('prints atomic units as the asset does, exactly', () => {
    const usdc = unitOfCurrency(1)
    expect(formatAmount('8492', usdc)).toBe('0.008492 USDC')
    expect(formatAmount('5000', usdc)).toBe('0.005 USDC')
    expect(formatAmount('1000000', usdc)).toBe('1 USDC')
    expect(formatAmount('123456789012345678901', usdc)).toBe('123456789012345.678901 USDC') // no float rounding
    expect(formatAmount(0, usdc)).toBe('0 USDC')
    expect(formatAmount('2500000', unitOfCurrency(4))).toBe('2.5 ALGO')
  })

  it('knows the canonical USDC per network and the Algorand requirement; anything else stays in atomic units', () => {
    expect(unitOfRequirement('eip155:8453', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')?.symbol).toBe('USDC')
    expect(unitOfRequirement('eip155:1', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48')?.symbol).toBe('USDC')
    // Base's USDC address on Ethereum is not USDC there
    expect(unitOfRequirement('eip155:1', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913')).toBeUndefined()
    expect(unitOfRequirement('algorand:abc', '31566704')?.symbol).toBe('USDC')
    expect(formatAmount('8492', unitOfRequirement('eip155:8453', '0xdead'), '0xdead')).toBe('8492 atomic units of 0xdead')
    expect(formatAmount('8492', unitOfCurrency(9), '0xdead')).toBe('8492 atomic units of 0xdead')
  })
})
