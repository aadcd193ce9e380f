/**
 * The one base class of every error the project throws on purpose.
 *
 * Modelled on viem's BaseError: a short message a human can act on, optional details
 * (never secrets: no private key, token or signature material), and the underlying cause.
 * `code` is a stable snake_case string that the HTTP layer maps to a status and body in one place.
 */
export type BaseErrorParameters = {
  details?: string | undefined
  cause?: unknown
  meta?: Record<string, unknown> | undefined
}

export class BaseError<code extends string = string> extends Error {
  override name = 'BaseError'
  readonly code: code
  readonly shortMessage: string
  readonly details: string | undefined
  readonly meta: Record<string, unknown> | undefined

  constructor(code: code, shortMessage: string, parameters: BaseErrorParameters = {}) {
    super(parameters.details ? `${shortMessage}\n\nDetails: ${parameters.details}` : shortMessage, {
      cause: parameters.cause,
    })
    this.code = code
    this.shortMessage = shortMessage
    this.details = parameters.details
    this.meta = parameters.meta
  }
}
