import type { OperationStage } from './RequestExchange.js'
import { UnauthorizedError } from './routerRefusals.js'
import type { HttpResult, RequestContext } from './types.js'

export type SecurityRequirementsStageParameters<Locals extends Record<string, unknown>> = {
  /**
   * Per security scheme name: returns a truthy value when the request satisfies the scheme (stored in
   * `context.security[name]`); falsy or a throw means not satisfied. Runs before the body is read.
   */
  securityHandlers?: Record<string, (context: RequestContext<Locals>) => unknown | Promise<unknown>>
  /** Response when none of the operation's security requirements is satisfied (default 401 `unauthorized`). */
  unauthorized?: (context: RequestContext<Locals>) => HttpResult | Error | Promise<HttpResult | Error>
  /**
   * An error a security handler threw that fails the request whatever else is satisfied — given back as the
   * stage's answer (the error mapping renders it). For a credential that was sent but could not be checked (its
   * store failed): the request is neither refused as if the credential were bad nor let on as if none were sent.
   * Default: none (a throw only means not satisfied).
   */
  failsRequest?: (error: unknown) => boolean
}

const satisfied = (value: unknown) => Boolean(value) && !(typeof value === 'object' && (value as { error?: unknown }).error)

/**
 * Security: every scheme the operation's requirements name is asked (concurrently, each once), then any one
 * requirement object whose schemes are all satisfied lets the request on (`[]` or `{}`: nothing required).
 * The verdicts land in `context.security` (`{error}` for a scheme that threw, `undefined` for a scheme
 * without handler) with `authorized`, as openapi-backend's `handleRequest` records them.
 */
export function securityRequirementsStage<Locals extends Record<string, unknown>>({
  securityHandlers,
  unauthorized,
  failsRequest,
}: SecurityRequirementsStageParameters<Locals>): OperationStage<Locals> {
  const handlers = new Map<string, (ctx: RequestContext<Locals>) => unknown>()
  for (const [name, fn] of Object.entries(securityHandlers ?? {})) handlers.set(name, fn)

  const rejected = (error: unknown) => ({ error: error || new Error('security handler rejected') })
  /** The scheme's verdict: as the handler gives it (a value, or a promise of one), a throw as `{error}`. */
  const runScheme = (name: string, ctx: RequestContext<Locals>): unknown => {
    const fn = handlers.get(name)
    if (!fn) return undefined
    let verdict: unknown
    try {
      verdict = fn(ctx)
    } catch (error) {
      return rejected(error)
    }
    return verdict instanceof Promise ? verdict.catch(rejected) : verdict
  }

  /** The first verdict that is an error failing the request (`failsRequest`), if any. */
  const failing = (results: Record<string, unknown>): Error | undefined => {
    if (!failsRequest) return undefined
    for (const name in results) {
      const verdict = results[name]
      const error = typeof verdict === 'object' && verdict !== null ? (verdict as { error?: unknown }).error : undefined
      if (error instanceof Error && failsRequest(error)) return error
    }
    return undefined
  }

  const decide = (ctx: RequestContext<Locals>, requirements: string[][], results: Record<string, unknown>) => {
    const failed = failing(results)
    if (failed) {
      ctx.security = { ...results, authorized: false }
      return failed
    }
    const authorized = requirements.some((names) => names.every((name) => satisfied(results[name])))
    ctx.security = { ...results, authorized }
    if (requirements.length === 0 || authorized) return undefined
    if (unauthorized) return unauthorized(ctx)
    return new UnauthorizedError()
  }

  return (exchange) => {
    const ctx = exchange.context!
    const compiled = typeof exchange.match === 'object' ? exchange.match : undefined
    const requirements = compiled?.requirements ?? []
    const schemes = compiled?.schemes ?? []
    // No scheme to ask (none required, or only `{}`): decided without a promise.
    if (schemes.length === 0) return decide(ctx, requirements, {})
    // All started before any is awaited (they run concurrently); decided at once when every verdict is already
    // known (a scheme without its credential in the request answers synchronously), without a promise.
    const verdicts = schemes.map((name) => runScheme(name, ctx))
    const resultsOf = (values: readonly unknown[]) => {
      const results: Record<string, unknown> = {}
      for (let i = 0; i < values.length; i++) results[schemes[i]!] = values[i]
      return results
    }
    if (!verdicts.some((verdict) => verdict instanceof Promise)) return decide(ctx, requirements, resultsOf(verdicts))
    return Promise.all(verdicts).then((values) => decide(ctx, requirements, resultsOf(values)))
  }
}
