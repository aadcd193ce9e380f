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

/**
 * What a stage answers, as the app renders it: a result as is, a catalogued refusal it gave back (an `Error`
 * value) or threw through the gateway's catalogue.
 */
export function answeredByCatalogue<R extends UnroutedResult | Error | undefined>(pending: Promise<R> | R): Promise<Exclude<R, Error> | UnroutedResult> {
  const rendered = (error: unknown) => gatewayCatalogue.toResult(error) ?? Promise.reject(error)
  return Promise.resolve(pending).then((answer) => (answer instanceof Error ? rendered(answer) : (answer as Exclude<R, Error>)), rendered)
}
