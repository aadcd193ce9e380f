import type { ShadowErrorCode } from '../../overlord/ShadowError.js'

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
