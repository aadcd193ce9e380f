import { BaseError, type BaseErrorParameters } from '../shared/errors/BaseError.js'

/**
 * Every error of the shadow-overlord tier (challenges, bearer, vault, cabinets). `code` is the stable
 * snake_case code of the HTTP body; `SHADOW_ERROR_STATUS` is the status each code maps to (docs/design.md,
 * "Status codes chosen where the seed is silent"). Messages and details never carry key material,
 * signatures or tokens.
 */
export const SHADOW_ERROR_STATUS = {
  bearer_required: 401,
  bearer_invalid: 401,
  insufficient_privilege: 401,
  invalid_scope: 400,
  invalid_params: 400,
  confirm_mismatch: 400,
  message_hash_mismatch: 400,
  unlock_message_mismatch: 400,
  unlock_proof_missing: 400,
  nonce_not_found: 404,
  nonce_expired: 410,
  nonce_consumed: 409,
  scope_mismatch: 403,
  params_mismatch: 403,
  bad_signature: 403,
  vault_unlock_failed: 403,
  vault_locked: 423,
  cabinet_not_found: 404,
  agent_not_found: 404,
  overlord_not_configured: 503,
  audit_unavailable: 503,
} as const

export type ShadowErrorCode = keyof typeof SHADOW_ERROR_STATUS

export class ShadowError<code extends ShadowErrorCode = ShadowErrorCode> extends BaseError<code> {
  override name = 'ShadowError'
  readonly status: (typeof SHADOW_ERROR_STATUS)[code]

  constructor(code: code, shortMessage: string, parameters: BaseErrorParameters = {}) {
    super(code, shortMessage, parameters)
    this.status = SHADOW_ERROR_STATUS[code]
  }
}

export function isShadowError(error: unknown): error is ShadowError {
  return error instanceof ShadowError
}
