import type { ErrorRows } from '../errorCatalogue.js'

/** Paid storage (src/storage) and its x402 rails (src/x402). Client mistakes are 4xx; only peers failing give 5xx. */
export const storageErrorRows = {
  empty_body: { status: 400 },
  invalid_multipart: { status: 400 },
  invalid_tag: { status: 400 },
  invalid_payment_header: { status: 400 },
  unsupported_network: { status: 400 },
  // a refused payment (src/storage/paymentRefusals.ts): the client may pay again
  invalid_payment: { status: 402 },
  wrong_asset: { status: 402 },
  insufficient_amount: { status: 402 },
  wrong_receiver: { status: 402 },
  request_hash_mismatch: { status: 402 },
  expired_payment: { status: 402 },
  upload_not_found: { status: 404 },
  payment_replayed: { status: 409 },
  payload_too_large: { status: 413 },
  storage_upstream_failed: { status: 502 },
  facilitator_unavailable: { status: 502 },
  settlement_pending: { status: 502 },
  ledger_node_unavailable: { status: 502 },
  storage_not_configured: { status: 503 },
  upstream_credit_insufficient: { status: 503 },
  too_many_uploads: { status: 503 },
  // the intake before payment (src/storage/intake/errors.ts): a client's excess is 4xx, never 5xx
  too_many_unpaid_requests: { status: 429 },
  too_many_payment_checks: { status: 429 },
  upload_too_slow: { status: 408 },
  unpaid_body_too_large: { status: 413 },
  multipart_too_many_parts: { status: 413 },
  multipart_field_too_large: { status: 413 },
} as const satisfies ErrorRows
