import { BaseError } from '../shared/errors/BaseError.js'
import type { HttpResult } from '../shared/http/index.js'
import { batchErrorRows } from './batch/batchErrorRows.js'
import { llmErrorRows } from './llm/llmErrorRows.js'
import { shadowErrorRows } from './shadow/shadowErrorRows.js'
import { storageErrorRows } from './storage/storageErrorRows.js'

/**
 * The one place mapping error codes to HTTP statuses. Every error a handler lets escape that carries a
 * `code` listed here becomes `status` + `Error` body `{error: code, message, details?}`.
 * Domains ADD rows (keep them grouped by domain); the body `message` is the error's `shortMessage`.
 */
export const errorCatalogue: Record<string, { status: number }> = {
  // request shape
  invalid_request: { status: 400 },
  invalid_json: { status: 400 },
  // login (src/auth)
  invalid_wallet: { status: 400 },
  challenge_invalid: { status: 401 },
  challenge_expired: { status: 401 },
  signature_invalid: { status: 401 },
  session_invalid: { status: 401 },
  // cost endpoints
  quota_exceeded: { status: 402 },
  // marketplace / model server (src/marketplace)
  agent_not_found: { status: 404 },
  cabinet_not_found: { status: 404 },
  modelserver_unavailable: { status: 502 },
  model_not_found: { status: 400 },
  model_request_invalid: { status: 400 },
  // configuration
  invalid_config: { status: 500 },
  // shadow-overlord tier, vault, cabinets (src/overlord/ShadowError.ts)
  ...shadowErrorRows,
  // paid storage (src/x402, src/storage: src/storage/httpStatus.ts) and receipt batches, rows beside their handlers
  ...storageErrorRows,
  ...batchErrorRows,
  ...llmErrorRows,
}

export type ErrorDetails = Record<string, unknown>

/** Maps a thrown error to a response, or `undefined` when it is not a catalogued `BaseError`. */
export function errorToResult(error: unknown): HttpResult | undefined {
  if (!(error instanceof BaseError)) return undefined
  const entry = errorCatalogue[error.code]
  if (!entry) return undefined
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
