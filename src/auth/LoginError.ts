import { BaseError } from '../shared/errors/BaseError.js'

export type LoginErrorCode =
  | 'invalid_wallet'
  | 'challenge_invalid'
  | 'challenge_expired'
  | 'signature_invalid'
  | 'session_invalid'

/** A login or session failure a client can act on; mapped to 400/401 in `src/handlers/errorCatalogue.ts`. */
export class LoginError extends BaseError<LoginErrorCode> {
  override name = 'LoginError'
}
