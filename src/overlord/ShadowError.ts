import { BaseError } from '../shared/errors/BaseError.js'

/**
 * Every error of the shadow-overlord tier (challenges, bearer, vault, cabinets). `code` is the stable
 * snake_case code of the HTTP body; the gateway's error table (src/handlers/errorCatalogue.ts) maps each code to
 * its status (docs/design.md, "Status codes chosen where the seed is silent"). Messages and details never carry
 * key material, signatures or tokens.
 */
export const SHADOW_ERROR_CODES = [
  'bearer_required',
  'bearer_invalid',
  'insufficient_privilege',
  'invalid_scope',
  'invalid_params',
  'confirm_mismatch',
  'message_hash_mismatch',
  'unlock_message_mismatch',
  'unlock_proof_missing',
  'nonce_not_found',
  'nonce_expired',
  'nonce_consumed',
  'scope_mismatch',
  'params_mismatch',
  'bad_signature',
  'vault_unlock_failed',
  'vault_locked',
  'cabinet_not_found',
  'agent_not_found',
  'overlord_not_configured',
  'audit_unavailable',
] as const

export type ShadowErrorCode = (typeof SHADOW_ERROR_CODES)[number]

export class ShadowError<code extends ShadowErrorCode = ShadowErrorCode> extends BaseError<code> {
  override name = 'ShadowError'
}

export function isShadowError(error: unknown): error is ShadowError {
  return error instanceof ShadowError
}
