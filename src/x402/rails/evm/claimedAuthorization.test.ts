import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, http } from 'viem'
import { base } from 'viem/chains'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { claimedAuthorization } from './claimedAuthorization.js'

describe('claimedAuthorization', () => {
  it('reads the EIP-3009 authorization from the payment payload as the ledger stores it (what a stock client sends)', async () => {
    const payer = privateKeyToAccount(generatePrivateKey())
    const requirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '1000',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: '0x00000000000000000000000000000000000000aa',
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    } as const
    // The stock client signs offline (EIP-712); the public client is never called for an EIP-3009 payment.
    const scheme = new ExactEvmScheme(toClientEvmSigner(payer, createPublicClient({ chain: base, transport: http('http://127.0.0.1:9') })))
    const signed = await scheme.createPaymentPayload(2, requirements as never)
    const stored = JSON.stringify({ x402Version: 2, accepted: requirements, payload: signed.payload })

    const auth = claimedAuthorization(stored)
    expect(auth).toBeDefined()
    expect(auth!.from.toLowerCase()).toBe(payer.address.toLowerCase())
    expect(auth!.nonce).toMatch(/^0x[0-9a-f]{64}$/)
    expect(auth!.value).toBe(1000n)
    expect(auth!.validBefore).toBeGreaterThan(BigInt(Math.floor(Date.now() / 1000)))
  })

  it('a payload without an EVM authorization (or not JSON) gives undefined, so the claim waits for an operator', () => {
    expect(claimedAuthorization(JSON.stringify({ x402Version: 2, payload: { transaction: 'algo' } }))).toBeUndefined()
    expect(claimedAuthorization('not json')).toBeUndefined()
  })
})
