/**
 * The pipeline's own refusals, before any handler runs: the security stage's and the rate limit's (the router's —
 * no route, no method, unmet security, an invalid request — are its own: src/shared/http/routerRefusals.ts).
 * Coded errors like every other refusal: their statuses are rows of the gateway's catalogue (`coreErrorRows`), and
 * one stage renders them (`errorStage`). The gate's own refusal is its domain's: src/gate/AuthRequiredError.ts.
 */
import { defineError } from '../shared/errors/defineError.js'

/** `/metrics` off loopback with a wrong token. */
export const MetricsTokenInvalidError = defineError('MetricsTokenInvalidError', 'metrics_token_invalid', () => 'metrics token invalid')

/** `/metrics` off loopback without a token: what to send (RFC 6750's challenge in `WWW-Authenticate`). */
export const MetricsTokenRequiredError = defineError('MetricsTokenRequiredError', 'metrics_token_required', (message: string) => ({
  message,
  answer: { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } },
}))

/** Over the per-address limit; `Retry-After` says when to come back. */
export const RateLimitedError = defineError('RateLimitedError', 'rate_limited', (retryAfterS: number) => ({
  message: `too many requests; retry after ${retryAfterS} s`,
  meta: { retry_after_s: retryAfterS },
}), { stackless: true })
