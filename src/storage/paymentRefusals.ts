/**
 * The codes of a refused payment (x402 rails): the upload is answered with the payment requirements again, so
 * the client can pay anew. The gateway's error table (src/handlers/errorCatalogue.ts) answers each with 402.
 */
export const PAYMENT_REFUSAL_CODES: ReadonlySet<string> = new Set([
  'invalid_payment',
  'wrong_asset',
  'insufficient_amount',
  'wrong_receiver',
  'request_hash_mismatch',
  'expired_payment',
])
