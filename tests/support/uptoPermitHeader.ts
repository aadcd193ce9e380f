/**
 * A well-formed x402 `upto` payment header (a Permit2 permit on Base) for tests whose facilitator accepts any
 * signature: the addresses the cost tests configure, a fresh nonce, a deadline `validS` seconds away.
 */
import { randomBytes } from 'node:crypto'
import { UPTO_PERMIT2_PROXY } from '../../src/x402/rails/evm/EvmUptoRail.js'

export const UPTO_TEST = {
  payTo: '0x52908400098527886E0F7030069857D2E4169EE7',
  payer: '0xCC6Ea14Df3d24fEbEAf620cD8D6ae0e680447f93',
  facilitator: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
} as const

export type UptoPermitOptions = { from?: string; amount?: string; validS?: number; now?: number; paymentIdentifier?: string }

/** The header, and the permit's nonce and deadline (epoch seconds). */
export function uptoPermitHeader(o: UptoPermitOptions = {}): { headers: Record<string, string>; nonce: string; deadline: number } {
  const nonce = BigInt('0x' + randomBytes(16).toString('hex')).toString()
  const deadline = (o.now ?? Math.floor(Date.now() / 1000)) + (o.validS ?? 600)
  const payload = {
    ...(o.paymentIdentifier ? { extensions: { 'payment-identifier': { info: { required: false, id: o.paymentIdentifier } } } } : {}),
    x402Version: 2,
    accepted: { scheme: 'upto', network: 'eip155:8453' },
    payload: {
      signature: '0x' + '11'.repeat(65),
      permit2Authorization: {
        from: o.from ?? UPTO_TEST.payer,
        spender: UPTO_PERMIT2_PROXY,
        permitted: { token: UPTO_TEST.usdc, amount: o.amount ?? '300' },
        nonce,
        deadline: String(deadline),
        witness: { to: UPTO_TEST.payTo, facilitator: UPTO_TEST.facilitator, validAfter: '0' },
      },
    },
  }
  return { headers: { 'payment-signature': Buffer.from(JSON.stringify(payload)).toString('base64') }, nonce, deadline }
}
