import { intakeErrorStatus } from './intake/errors.js'

/**
 * HTTP status of every error code thrown by `src/x402` and `src/storage` (the rows this domain adds to the
 * gateway's error catalogue). Client mistakes are 4xx; only peers failing give 5xx.
 */
export const storageErrorStatus = {
  empty_body: 400,
  invalid_multipart: 400,
  invalid_tag: 400,
  invalid_payment_header: 400,
  unsupported_network: 400,
  invalid_payment: 402,
  wrong_asset: 402,
  insufficient_amount: 402,
  wrong_receiver: 402,
  request_hash_mismatch: 402,
  expired_payment: 402,
  upload_not_found: 404,
  payment_replayed: 409,
  payload_too_large: 413,
  storage_upstream_failed: 502,
  facilitator_unavailable: 502,
  ledger_node_unavailable: 502,
  storage_not_configured: 503,
  upstream_credit_insufficient: 503,
  too_many_uploads: 503,
  // refusals of the intake before payment (src/storage/intake/errors.ts)
  ...intakeErrorStatus,
} as const satisfies Record<string, number>
