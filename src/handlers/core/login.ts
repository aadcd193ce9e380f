import { LoginError } from '../../auth/LoginError.js'
import type { LoginChallenge, LoginChallengeRequest, RegisterRequest, Session, SessionValidation, WalletPermissions } from '../../../generated/gateway/types.gen.js'
import type { Handler } from '../types.js'
import { clearedSessionCookie, sessionCookie, sessionTokenOf } from './session.js'

const secure = (origin: string) => origin.startsWith('https:')

export const createLoginChallenge: Handler = async (ctx) => {
  const { wallet } = ctx.body as LoginChallengeRequest
  return { status: 200, body: (await ctx.services.login.createChallenge(wallet)) satisfies LoginChallenge }
}

export const registerWithSignature: Handler = async (ctx) => {
  const { wallet, challenge, signature } = ctx.body as RegisterRequest
  const session = await ctx.services.login.register(wallet, challenge, signature)
  const { config } = ctx.services
  return {
    status: 200,
    headers: { 'Set-Cookie': sessionCookie(session.session_token, config.login.sessionTtlS, secure(config.publicOrigin)), 'Cache-Control': 'no-store' },
    body: session satisfies Session,
  }
}

export const validateSession: Handler = async (ctx) => {
  const session = await ctx.services.login.validate(sessionTokenOf(ctx))
  if (!session) throw new LoginError('session_invalid', 'session token unknown, expired or revoked')
  return { status: 200, body: { valid: true, wallet: session.wallet, expires_at: session.expires_at } satisfies SessionValidation }
}

export const logout: Handler = async (ctx) => {
  const token = sessionTokenOf(ctx)
  if (token) await ctx.services.login.logout(token)
  if (ctx.locals.session) await ctx.services.catalogue.emit({ kind: 'auth.logout', payload: { wallet: ctx.locals.session.wallet } })
  return { status: 204, headers: { 'Set-Cookie': clearedSessionCookie(secure(ctx.services.config.publicOrigin)) } }
}

export const getWalletPermissions: Handler = async (ctx) => {
  const token = ctx.headers['x-session-token']
  return { status: 200, body: (await ctx.services.login.permissions(ctx.params.wallet!, Array.isArray(token) ? token[0] : token)) satisfies WalletPermissions }
}
