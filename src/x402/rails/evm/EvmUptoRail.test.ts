import { describe, expect, it } from 'vitest'
import { readX402Config } from '../../config.js'
import { createAlgodClient } from '../algorand/createAlgodClient.js'
import { EvmUptoRail, UPTO_PERMIT2_PROXY } from './EvmUptoRail.js'
import type { PaymentPayload } from '../../headers.js'
import { createRailRegistry } from '../../RailRegistry.js'

const PAY_TO = '0x52908400098527886E0F7030069857D2E4169EE7'
const PAYER = '0xCC6Ea14Df3d24fEbEAf620cD8D6ae0e680447f93'
const FACILITATOR = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'
const USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'
const NOW = 1_800_000_000

const rail = new EvmUptoRail({ network: 'eip155:8453', label: 'USDC on Base', asset: USDC, tokenName: 'USD Coin', tokenVersion: '2', payTo: PAY_TO, facilitatorAddress: FACILITATOR })
const requirement = rail.requirementOf({ resourceUrl: 'http://gw.test/llm/chat', description: 'a call', mimeType: 'application/json', priceAtomic: 1000n, maxTimeoutSeconds: 60 })

function payload(change: { auth?: Record<string, unknown>; witness?: Record<string, unknown>; accepted?: Record<string, unknown>; amount?: string } = {}): { payload: PaymentPayload } {
  return {
    payload: {
      x402Version: 2,
      accepted: { scheme: 'upto', network: 'eip155:8453', payTo: PAY_TO, ...change.accepted },
      payload: {
        signature: '0x' + '11'.repeat(65),
        permit2Authorization: {
          from: PAYER,
          spender: UPTO_PERMIT2_PROXY,
          permitted: { token: USDC, amount: change.amount ?? '1000' },
          nonce: '123',
          deadline: String(NOW + 60),
          witness: { to: PAY_TO, facilitator: FACILITATOR, validAfter: '0', ...change.witness },
          ...change.auth,
        },
      },
    } as unknown as PaymentPayload,
  }
}

const reasonOf = (p: { payload: PaymentPayload }, minimum = 10n) => {
  try {
    rail.check(p, requirement, minimum, NOW)
    return 'accepted'
  } catch (error) {
    return (error as { reason?: string; code: string }).reason ?? (error as { code: string }).code
  }
}

describe('the upto rail', () => {
  it('states its requirement as @x402/evm’s upto client reads it', () => {
    expect(requirement).toMatchObject({ scheme: 'upto', amount: '1000', payTo: PAY_TO, asset: USDC, extra: { name: 'USD Coin', version: '2', assetTransferMethod: 'permit2', facilitatorAddress: FACILITATOR } })
  })

  it('accepts a well-formed permit, one below the route maximum too, and refuses what would let money go elsewhere', () => {
    expect(reasonOf(payload())).toBe('accepted')
    expect(reasonOf(payload({ amount: '10' }))).toBe('accepted')
    expect(reasonOf(payload({ amount: '9' }))).toBe('amount_insufficient')
    expect(reasonOf(payload({ accepted: { scheme: 'exact' } }))).toBe('scheme_mismatch')
    expect(reasonOf(payload({ witness: { to: FACILITATOR } }))).toBe('receiver_mismatch')
    expect(reasonOf(payload({ witness: { facilitator: PAYER } }))).toBe('facilitator_mismatch')
    expect(reasonOf(payload({ auth: { spender: PAYER } }))).toBe('spender_mismatch')
    expect(reasonOf(payload({ auth: { permitted: { token: PAYER, amount: '1000' } } }))).toBe('asset_mismatch')
    expect(reasonOf(payload({ auth: { deadline: String(NOW + 3) } }))).toBe('authorization_expired')
    expect(reasonOf(payload({ witness: { validAfter: String(NOW + 100) } }))).toBe('authorization_not_yet_valid')
    expect(reasonOf(payload({ auth: { nonce: '-1' } }))).toBe('invalid_payment_header')
    expect(reasonOf(payload({ auth: { nonce: (2n ** 256n).toString() } }))).toBe('invalid_payment_header')
  })

  it('is registered apart: fixed-price routes (/store) never see it, and it is not ready without the facilitator address', () => {
    const algod = createAlgodClient('http://127.0.0.1:1', '')
    const off = createRailRegistry(readX402Config({ SERVICE_X402__PAY_TO_EVM: PAY_TO }), algod)
    expect(off.metered).toEqual([])
    const on = createRailRegistry(readX402Config({ SERVICE_X402__PAY_TO_EVM: PAY_TO, SERVICE_X402__UPTO_FACILITATOR_ADDRESS: FACILITATOR }), algod)
    expect(on.metered.map((r) => r.id)).toEqual(['eip155:8453', 'eip155:1'])
    expect(on.rails.every((r) => r.scheme === 'exact')).toBe(true)
    expect(() => readX402Config({ SERVICE_X402__UPTO_FACILITATOR_ADDRESS: 'nope' })).toThrow()
  })
})
