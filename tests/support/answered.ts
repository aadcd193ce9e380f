import { gatewayCatalogue } from '../../src/handlers/plugins.js'
import type { HttpResult, UnroutedResult } from '../../src/shared/http/index.js'
import { PaymentRequiredError } from '../../src/x402/index.js'

/**
 * What the gateway answers for a meter call: its result, or the 402 it threw (past the quota, a refused payment or
 * settlement) rendered as the app renders it — through the gateway's catalogue. Any other error stays thrown.
 */
export function answered(pending: Promise<HttpResult>): Promise<HttpResult> {
  return pending.catch((error: unknown) => (error instanceof PaymentRequiredError ? gatewayCatalogue.toResult(error)! : Promise.reject(error)))
}

/** What a stage answers, as the app renders it: a result as is, any catalogued refusal it threw through the gateway's catalogue. */
export function answeredByCatalogue<R extends UnroutedResult | undefined>(pending: Promise<R> | R): Promise<R | UnroutedResult> {
  return Promise.resolve(pending).catch((error: unknown) => gatewayCatalogue.toResult(error) ?? Promise.reject(error))
}
