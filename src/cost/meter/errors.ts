import { BaseError } from '../../shared/errors/BaseError.js'

/**
 * The call's payment pays for no more completion tokens: a generation is refused before the model server
 * hears of it. A domain that runs several generations (a coordinator task, the boardroom) stops there and
 * answers with what it has; a call refused at its first generation answers 402 (nothing ran, nothing is paid).
 */
export class GenerationBudgetSpentError extends BaseError<'generation_budget_spent'> {
  override name = 'GenerationBudgetSpentError'
}

/**
 * The call reached the time its payment must be settled by: the meter ended its generations (the settlement
 * must reach the facilitator before the payment expires).
 */
export class CallDeadlineError extends BaseError<'payment_expires_too_soon'> {
  override name = 'CallDeadlineError'
}
