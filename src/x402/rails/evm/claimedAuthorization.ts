import type { PaymentPayload } from '../../headers.js'
import { type EvmAuthorization, parseEvmPayment } from './evmRail.js'

/**
 * The EIP-3009 authorization of a claimed EVM deposit, from the x402 payment payload the ledger keeps with it
 * (`storage_deposits.payment_payload`: the whole payload, its authorization under `payload.authorization`).
 * Undefined for a payload that carries none — the claim cannot be checked on chain and waits for an operator.
 */
export function claimedAuthorization(paymentPayloadJson: string): EvmAuthorization | undefined {
  try {
    return parseEvmPayment(JSON.parse(paymentPayloadJson) as PaymentPayload).authorization
  } catch {
    return undefined
  }
}
