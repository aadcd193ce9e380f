import { retryShortly } from '../db/DatabaseUnavailableError.js'
import { defineError } from '../shared/errors/defineError.js'

/**
 * A credential that could not be checked because its store failed (the sessions, API keys or sign-in nonces
 * could not be read or written): 503 `credentials_unavailable` with `Retry-After`, never the 401 of a bad
 * credential — a front end that signs its user out on 401 would sign every user out while the database is away.
 * `cause` is the store's error (logged, never answered).
 */
export const CredentialsUnavailableError = defineError('CredentialsUnavailableError', 'credentials_unavailable', (cause: unknown) =>
  retryShortly('Credentials cannot be checked right now; retry shortly.', cause),
)
export type CredentialsUnavailableError = InstanceType<typeof CredentialsUnavailableError>

/** `read` with any failure of the store it reads turned into `CredentialsUnavailableError`. */
export async function checkingCredentials<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (cause) {
    throw new CredentialsUnavailableError(cause)
  }
}
