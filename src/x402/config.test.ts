import { describe, expect, it } from 'vitest'
import { readX402Config } from './config.js'

describe('readX402Config assets', () => {
  it("defaults to each network's canonical USDC, so only other assets need configuring", () => {
    expect(readX402Config({}).assets).toEqual({
      'eip155:8453': '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      'eip155:1': '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    })
    expect(readX402Config({}).tokenName).toBe('USD Coin')
  })

  it('takes another asset from the environment', () => {
    const other = '0x036CbD53842c5426634e7929541eC2318f3dCF7e'
    expect(readX402Config({ SERVICE_X402__ASSET__EIP155_8453: other }).assets['eip155:8453']).toBe(other)
  })
})
