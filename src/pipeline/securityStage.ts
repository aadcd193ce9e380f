import { CredentialsUnavailableError } from '../auth/CredentialsUnavailableError.js'
import type { ArrivalGate } from '../gate/ArrivalGate.js'
import { requiresSession } from '../gate/PublicSet.js'
import { lookupSession, sessionTokenOf } from '../handlers/core/session.js'
import type { DomainSetup, GatewayLocals, HandlerContext, Services } from '../handlers/types.js'
import { type HttpResult, type RequestContext, UnauthorizedError } from '../shared/http/index.js'
import { ShadowError } from '../overlord/ShadowError.js'
import type { GateStage } from './gateStage.js'
import { MetricsTokenInvalidError, MetricsTokenRequiredError } from './refusals.js'

export type SecurityStageParameters = {
  services: Services
  gate: ArrivalGate
  gateStage: GateStage
  /** The domains' security handlers and 401 shapes (e.g. the shadow tier's `overlordBearer`). */
  setups: readonly DomainSetup[]
}

export type SecurityStage = {
  /** Per scheme name: truthy = satisfied (openapi-backend's security handlers). */
  handlers: Record<string, (ctx: RequestContext<GatewayLocals>) => unknown>
  /** The answer when none of the operation's requirements is satisfied, or the refusal to answer (`StageAnswer`). */
  unauthorized: (ctx: RequestContext<GatewayLocals>) => Promise<HttpResult | Error>
  /**
   * A credential sent that could not be checked (its store failed: `CredentialsUnavailableError`) fails the
   * request with 503, even where it could have come in without one: not the 401 that signs a client out, nor an
   * answer as if no credential had been sent.
   */
  failsRequest: (error: unknown) => boolean
}

const BEARER_SCHEME = 'overlordBearer'

/**
 * Stage 5, security: the operation's security requirements, checked once the route is known. The session
 * schemes are the core's (gate rules 3 and 6); other schemes belong to domains. A session-requiring
 * operation that is not satisfied is answered by the gate (302/401), others by their scheme's 401.
 */
export function securityStage({ services, gate, gateStage, setups }: SecurityStageParameters): SecurityStage {
  const withServices = (ctx: RequestContext<GatewayLocals>) => Object.assign(ctx, { services }) as HandlerContext
  const domainSecurity: Record<string, (ctx: HandlerContext) => unknown> = {}
  const domainUnauthorized: Record<string, (ctx: HandlerContext) => HttpResult | Promise<HttpResult>> = {}
  for (const setup of setups) {
    Object.assign(domainSecurity, setup.securityHandlers ?? {})
    Object.assign(domainUnauthorized, setup.unauthorized ?? {})
  }

  // One session lookup per request, shared by the `sessionToken` and `sessionCookie` security handlers (they
  // run together on the request's one context; kept in its locals rather than a WeakMap insert per request).
  // A request without a session token has nothing to look up: answered at once (no promise).
  const openWithoutSession = (ctx: RequestContext<GatewayLocals>) => (gate.isOpen(ctx.path, ctx.operation.security) ? { anonymous: true } : undefined)
  const sessionSecurity = (ctx: RequestContext<GatewayLocals>) => {
    let lookup = ctx.locals.sessionLookup
    if (lookup === undefined) {
      // a session token, or a sign-in-with-x proof (one lookup: the proof's nonce is used once)
      lookup = lookupSession(services, ctx)
      if (lookup === undefined) return openWithoutSession(ctx)
      ctx.locals.sessionLookup = lookup
    }
    return lookup.then((session) => {
      if (!session) return openWithoutSession(ctx)
      ctx.locals.session = session
      return session
    })
  }

  return {
    handlers: {
      // Rule 3: a valid session proceeds. Rule 6: with the hard gate off, the pre-rollout list proceeds too.
      // `sessionCookie` is the GET/HEAD alternative of the same session (`sessionTokenOf` reads both).
      sessionToken: sessionSecurity,
      sessionCookie: sessionSecurity,
      // `/metrics`: loopback, or the metrics token off loopback (src/services/MetricsAccess.ts).
      metricsBearer: (ctx: RequestContext<GatewayLocals>) => services.metricsAccess.check(ctx.ip, ctx.headers.authorization) === undefined,
      ...Object.fromEntries(Object.entries(domainSecurity).map(([name, fn]) => [name, (ctx: RequestContext<GatewayLocals>) => fn(withServices(ctx))])),
    },
    failsRequest: (error) => error instanceof CredentialsUnavailableError,
    unauthorized: async (ctx) => {
      if (requiresSession(ctx.operation.security)) return gateStage.deny(ctx, ctx.operation)
      const schemes = ctx.operation.security.flatMap((r) => Object.keys(r))
      if (schemes.includes('metricsBearer')) return metricsUnauthorized(ctx, services)
      for (const scheme of schemes) {
        const custom = domainUnauthorized[scheme]
        if (custom) return custom(withServices(ctx))
      }
      if (schemes.includes(BEARER_SCHEME)) return bearerUnauthorized(ctx, services)
      throw new UnauthorizedError()
    },
  }
}

/** 401 of `/metrics` off loopback: what to send, or that the token sent is wrong (never which part). */
function metricsUnauthorized(ctx: RequestContext<GatewayLocals>, services: Services): never {
  const refusal = services.metricsAccess.check(ctx.ip, ctx.headers.authorization)
  if (refusal === 'metrics_token_invalid') throw new MetricsTokenInvalidError()
  throw new MetricsTokenRequiredError(
    services.metricsAccess.tokenConfigured
      ? '/metrics off this machine needs Authorization: Bearer <SERVICE_METRICS__TOKEN>'
      : '/metrics is served on loopback only; the operator sets SERVICE_METRICS__TOKEN to scrape it from elsewhere',
  )
}

/** Default 401 of the shadow tier's bearer scheme (`BearerUnauthorized` of the document). */
async function bearerUnauthorized(ctx: RequestContext<GatewayLocals>, services: Services): Promise<never> {
  const authorization = ctx.headers.authorization
  if (authorization && /^bearer\s+\S/i.test(authorization)) throw new ShadowError('bearer_invalid', 'bearer token invalid or expired')
  const session = await services.login.validate(sessionTokenOf(ctx))
  if (session) throw new ShadowError('insufficient_privilege', 'a session token does not authorise shadow-overlord operations')
  throw new ShadowError('bearer_required', 'Authorization: Bearer <jwt> required')
}
