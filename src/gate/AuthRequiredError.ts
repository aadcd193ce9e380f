import type { ErrorAnswer } from '../shared/errors/BaseError.js'
import { defineError } from '../shared/errors/defineError.js'

/**
 * The arrival gate's 401 (seed 000 §4.1 rule 5): a closed path without a live session. Its body is the gate's
 * `AuthRequired` — or, on a route of another API family, that family's error shape — so the gate gives it.
 */
export const AuthRequiredError = defineError('AuthRequiredError', 'auth_required', (answer: ErrorAnswer) => ({ message: 'a live session is required', answer }), { stackless: true })
