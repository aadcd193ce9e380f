import { BaseError } from '../shared/errors/BaseError.js'
import { buildPaymentRequired, type PaymentRequired, type PaymentRequiredInput, renderPaymentRequired } from './paymentRequired.js'

export { renderPaymentRequired } from './paymentRequired.js'

/**
 * Payment is required (402): a paid route's refusal, thrown like any coded error and rendered once by the error
 * catalogue. It carries the x402 body for the version the client speaks — the requirements, why (`error`,
 * `message`), `resource` and `extensions` — built by `buildPaymentRequired`, and answers it as every 402 is
 * written (`renderPaymentRequired`: the body plus PAYMENT-REQUIRED) through the error's `answer`.
 */
export class PaymentRequiredError extends BaseError<'payment_required'> {
  override name = 'PaymentRequiredError'
  readonly body: PaymentRequired & { details?: Record<string, unknown> }

  /**
   * `details`: what the client needs to fix the refusal (a cost call's quota, the minimum validity, a debt);
   * `headers`: headers its answer carries besides PAYMENT-REQUIRED (a refund's `Cache-Control: no-store`).
   */
  constructor(input: PaymentRequiredInput, details?: Record<string, unknown>, headers?: Readonly<Record<string, string>>) {
    const body = { ...buildPaymentRequired(input), ...(details ? { details } : {}) }
    const { body: rendered, headers: written } = renderPaymentRequired(body)
    super('payment_required', body.message ?? 'payment required', { answer: { body: rendered, headers: { ...written, ...headers } } })
    this.body = body
  }
}
