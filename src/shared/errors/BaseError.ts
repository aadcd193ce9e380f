/**
 * The one base class of every error the project throws on purpose.
 *
 * Modelled on viem's BaseError: a short message a human can act on, optional details
 * (never secrets: no private key, token or signature material), and the underlying cause.
 * `code` is a stable snake_case string that the HTTP layer maps to a status and body in one place.
 */
/**
 * How an error is answered when not as its API's plain error body — the body its route documents instead (the
 * gate's `AuthRequired`, an OpenAI-shaped 401), headers it carries (`WWW-Authenticate`), and the schema a body
 * answered outside any operation is checked against. The status is never here: it is the catalogue's.
 */
export type ErrorAnswer = {
  body?: unknown
  /** Answered with no body at all, whatever the route's error shape (the model server's 403 to a refused browser, as Ollama's). */
  empty?: boolean | undefined
  headers?: Readonly<Record<string, string>> | undefined
  /** `components.schemas` name the body must match when the request matched no operation. */
  component?: string | undefined
}

export type BaseErrorParameters = {
  /** How the HTTP layer answers it, when not with the plain error body (see `ErrorAnswer`). */
  answer?: ErrorAnswer | undefined
  details?: string | undefined
  cause?: unknown
  meta?: Record<string, unknown> | undefined
  /** The page of the docs that explains this error (`docs/security.md#…`); the message points at it. */
  docsPath?: string | undefined
  /**
   * A refusal that is part of ordinary traffic (the gate's 401, the router's 404, the rate limit's 429): no stack
   * is captured. It is answered, never logged, and capturing the stack was the largest part of what throwing it
   * cost (`npm run bench -- pipeline`, the 401 route).
   */
  stackless?: boolean | undefined
}

export class BaseError<code extends string = string> extends Error {
  override name = 'BaseError'
  readonly code: code
  readonly shortMessage: string
  readonly details: string | undefined
  readonly meta: Record<string, unknown> | undefined
  readonly docsPath: string | undefined
  readonly answer: ErrorAnswer | undefined

  constructor(code: code, shortMessage: string, parameters: BaseErrorParameters = {}) {
    const lines = [shortMessage]
    if (parameters.docsPath) lines.push(`Docs: ${parameters.docsPath}`)
    if (parameters.details) lines.push(`Details: ${parameters.details}`)
    const stackLimit = Error.stackTraceLimit
    if (parameters.stackless) Error.stackTraceLimit = 0
    super(lines.join('\n\n'), { cause: parameters.cause })
    Error.stackTraceLimit = stackLimit
    this.code = code
    this.shortMessage = shortMessage
    this.details = parameters.details
    this.meta = parameters.meta
    this.docsPath = parameters.docsPath
    this.answer = parameters.answer
  }

  /**
   * This error and its causes, outermost first, until one matches `predicate` (viem's `walk`): the first match,
   * or, without a predicate, the innermost cause. A cycle of causes ends the walk.
   */
  walk(predicate?: (error: unknown) => boolean): unknown {
    const seen = new Set<unknown>()
    let current: unknown = this
    while (current !== undefined && current !== null && !seen.has(current)) {
      if (predicate?.(current)) return current
      seen.add(current)
      const next: unknown = current instanceof Error ? current.cause : undefined
      if (next === undefined || next === null) return predicate ? undefined : current
      current = next
    }
    return predicate ? undefined : current
  }
}
