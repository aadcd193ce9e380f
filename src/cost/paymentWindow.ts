import type { Env } from '../config/env.js'
import { envInt } from '../config/env.js'

/** The longest a paid call may run by default (s): a generation that reaches it is ended and settled. */
export const DEFAULT_MAX_CALL_S = 120

/**
 * `SERVICE_QUOTA__MAX_CALL_S` (default 120, 5…3600): the longest a metered call may run. A paid call's payment
 * must stay valid that long plus the settlement margin (`src/x402/settlementWindow.ts`), or it is refused
 * before the call runs (402 `payment_expires_too_soon`); the 402 offers `maxTimeoutSeconds` accordingly.
 */
export function readMaxCallS(env: Env = process.env): number {
  return envInt(env, 'SERVICE_QUOTA__MAX_CALL_S', DEFAULT_MAX_CALL_S, { min: 5, max: 3600 })
}
