import type { ValidSession } from '../../auth/LoginService.js'
import { AuthRequiredError } from '../../gate/AuthRequiredError.js'
import type { HandlerContext, Services } from '../types.js'

/** Cookie carrying the session token for browser page navigations (GET/HEAD only; see docs/gateway-core.md). */
export const SESSION_COOKIE = 'svc_session'

function header(ctx: Pick<HandlerContext, 'headers'>, name: string): string | undefined {
  const value = ctx.headers[name]
  return Array.isArray(value) ? value[0] : value
}

export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined
  for (const part of cookieHeader.split(';')) {
    const index = part.indexOf('=')
    if (index < 0) continue
    if (part.slice(0, index).trim() === name) return part.slice(index + 1).trim()
  }
  return undefined
}

/**
 * The session token of a request: `X-Session-Token`, or — on GET/HEAD only, so a cross-site form can never
 * spend a session — the `svc_session` cookie the login sets for page navigations.
 */
export function sessionTokenOf(ctx: Pick<HandlerContext, 'headers' | 'method'>): string | undefined {
  const token = header(ctx, 'x-session-token')
  if (token) return token
  if (ctx.method === 'GET' || ctx.method === 'HEAD') return readCookie(header(ctx, 'cookie'), SESSION_COOKIE)
  return undefined
}

/**
 * The wallet session of a request: its session token's (Sign-In with Ethereum), or — without a token — its
 * `SIGN-IN-WITH-X` proof's (x402 sign-in-with-x: a wallet proves itself in the request itself). Undefined when
 * it has neither or they are not valid; a proof is good for one request.
 */
export function lookupSession(services: Pick<Services, 'login' | 'siwx'>, req: Pick<HandlerContext, 'headers' | 'method'>): Promise<ValidSession | undefined> | undefined {
  const token = sessionTokenOf(req)
  if (token !== undefined) return services.login.validate(token)
  const proof = header(req, 'sign-in-with-x')
  if (proof !== undefined) return services.siwx.authenticate(proof)
  return undefined
}

export function sessionCookie(token: string, maxAgeS: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAgeS}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`
}

/**
 * Who calls a session operation (seed 000 §4.2 tier matrix): the shadow overlord (a valid bearer where the
 * operation accepts it; no quota), a logged-in wallet, or — on `/llm/v1` — a wallet's API key.
 */
export type Caller = { wallet: string; tier: 'overlord' | 'session' | 'api_key' }

/** The caller of a session operation, or `undefined` when the request got in anonymously (an open operation). */
export function callerOf(ctx: HandlerContext): Caller | undefined {
  const overlord = ctx.security.overlordBearer
  if (typeof overlord === 'string') return { wallet: overlord, tier: 'overlord' }
  const wallet = ctx.locals.session?.wallet
  if (wallet) return { wallet, tier: 'session' }
  const key = ctx.locals.apiKey
  if (key) return { wallet: key.wallet, tier: 'api_key' }
  return undefined
}

/** For handlers of session operations: the caller, or the gate's refusal (401) when the request got in anonymously. */
export function requireCaller(ctx: HandlerContext): Caller {
  const caller = callerOf(ctx)
  if (!caller) throw new AuthRequiredError({ body: { code: 'auth_required', from: ctx.path } })
  return caller
}

/** For handlers of session operations: the caller's wallet, or the gate's refusal (401) when the request got in anonymously. */
export function requireWallet(ctx: HandlerContext): string {
  return requireCaller(ctx).wallet
}
