import type { ShadowErrorCode } from '../overlord/ShadowError.js'
import { BaseError } from '../shared/errors/BaseError.js'
import { PaymentRequiredError, renderPaymentRequired } from '../x402/PaymentRequiredError.js'
import type { HttpResult } from '../shared/http/index.js'

/**
 * The gateway's one error table: every error a handler lets escape that carries a `code` listed here becomes
 * `status` + `Error` body `{error: code, message, details?}` (the message is the error's `shortMessage`).
 * Domains throw codes and know no HTTP; each domain's rows are grouped below, in this file only. A code not
 * listed is a 500 `internal_error`.
 */
type Rows = Record<string, { status: number }>

/** The shadow-overlord tier, vault and cabinets (src/overlord/ShadowError.ts): one row per code, checked by the type. */
export const shadowErrorRows = {
  bearer_required: { status: 401 },
  bearer_invalid: { status: 401 },
  insufficient_privilege: { status: 401 },
  invalid_scope: { status: 400 },
  invalid_params: { status: 400 },
  confirm_mismatch: { status: 400 },
  message_hash_mismatch: { status: 400 },
  unlock_message_mismatch: { status: 400 },
  unlock_proof_missing: { status: 400 },
  nonce_not_found: { status: 404 },
  nonce_expired: { status: 410 },
  nonce_consumed: { status: 409 },
  scope_mismatch: { status: 403 },
  params_mismatch: { status: 403 },
  bad_signature: { status: 403 },
  vault_unlock_failed: { status: 403 },
  vault_locked: { status: 423 },
  cabinet_not_found: { status: 404 },
  agent_not_found: { status: 404 },
  overlord_not_configured: { status: 503 },
  audit_unavailable: { status: 503 },
} as const satisfies Record<ShadowErrorCode, { status: number }>

/** Paid storage (src/storage) and its x402 rails (src/x402). Client mistakes are 4xx; only peers failing give 5xx. */
export const storageErrorRows: Rows = {
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
}

/** The receipt batch (src/batch). */
export const batchErrorRows: Rows = {
  receipt_not_found: { status: 404 },
  receipt_mapping_failed: { status: 500 },
}

/** `/llm` keys and `/coreagent` (src/llm). */
export const llmErrorRows: Rows = {
  llm_key_not_found: { status: 404 },
  // the meter (src/cost/meter): a generation past what the call's payment pays for, or past its settlement time
  generation_budget_spent: { status: 402 },
  payment_expires_too_soon: { status: 402 },
}

/** The MCP tools (src/mcp): their refusals are tool results carrying these bodies; the status says which HTTP answer they mirror. */
export const mcpErrorRows: Rows = {
  invalid_arguments: { status: 400 },
  url_not_allowed: { status: 400 },
  url_fetch_failed: { status: 502 },
}

export const errorCatalogue: Rows = {
  // request shape
  invalid_request: { status: 400 },
  invalid_json: { status: 400 },
  // login (src/auth)
  invalid_wallet: { status: 400 },
  challenge_invalid: { status: 401 },
  challenge_expired: { status: 401 },
  signature_invalid: { status: 401 },
  session_invalid: { status: 401 },
  // any paid route: the x402 body and PAYMENT-REQUIRED (PaymentRequiredError)
  payment_required: { status: 402 },
  // cost endpoints
  quota_exceeded: { status: 402 },
  // x402 batch-settlement (src/x402/batch): the voucher's running total is not the server's; the 402 carries the channel's state
  invalid_batch_settlement_evm_cumulative_amount_mismatch: { status: 402 },
  batch_settlement_not_offered: { status: 503 },
  // marketplace / model server (src/marketplace, src/modelserverClient; agent_not_found, cabinet_not_found: shadow rows)
  modelserver_unavailable: { status: 502 },
  model_not_found: { status: 400 },
  model_request_invalid: { status: 400 },
  // configuration
  invalid_config: { status: 500 },
  // CabinetRollbackError: a server-side step failed and everything was restored (CabinetOperationFailed).
  cabinet_operation_failed: { status: 500 },
  ...shadowErrorRows,
  ...storageErrorRows,
  ...batchErrorRows,
  ...llmErrorRows,
  ...mcpErrorRows,
}

export type ErrorDetails = Record<string, unknown>

/** The status the catalogue gives `code`, or `undefined` when it has no row (a 500). */
export function statusOfCode(code: string): number | undefined {
  return Object.hasOwn(errorCatalogue, code) ? errorCatalogue[code]!.status : undefined
}

/** Maps a thrown error to a response, or `undefined` when it is not a catalogued `BaseError`. */
export function errorToResult(error: unknown): HttpResult | undefined {
  if (!(error instanceof BaseError)) return undefined
  if (!Object.hasOwn(errorCatalogue, error.code)) return undefined
  const entry = errorCatalogue[error.code]!
  if (error instanceof PaymentRequiredError) return { ...renderPaymentRequired(error.body), status: entry.status }
  const details = detailsOf(error)
  // A refusal that says when to come back says it in the header clients and load balancers read, too.
  const retryAfter = details?.retry_after_s
  return {
    status: entry.status,
    body: details ? { error: error.code, message: error.shortMessage, details } : { error: error.code, message: error.shortMessage },
    ...(typeof retryAfter === 'number' && Number.isInteger(retryAfter) && retryAfter >= 1 ? { headers: { 'Retry-After': String(retryAfter) } } : {}),
  }
}

function detailsOf(error: BaseError): ErrorDetails | undefined {
  if (error.meta && Object.keys(error.meta).length > 0) return error.meta
  return undefined
}
