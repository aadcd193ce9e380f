import type { OperationId } from '../../../generated/gateway/operationIds.js'
import type { ShadowTier } from '../../shadow/createShadowTier.js'
import type { Caller } from '../../shadow/ShadowOverlord.js'
import type { HttpResult } from '../../shared/http/index.js'
import type { Handler, HandlerContext } from '../types.js'
import { sessionTokenOf } from '../core/session.js'
import { renderAdminPage } from '../../pages/adminPage.js'

export function callerOf(ctx: HandlerContext): Caller {
  const authorization = ctx.headers.authorization
  return { authorization: typeof authorization === 'string' ? authorization : undefined, hasSessionToken: Boolean(ctx.headers['x-session-token']) }
}

/**
 * Like `callerOf`, but a session token only counts when the login service knows it as live (a logged-in
 * caller gets 401 `insufficient_privilege`; a stale or made-up token is just a missing bearer).
 */
export async function verifiedCallerOf(ctx: HandlerContext): Promise<Caller> {
  const caller = callerOf(ctx)
  const login = (ctx.services as Partial<typeof ctx.services>).login
  if (!caller.hasSessionToken || !login) return caller
  return { ...caller, hasSessionToken: (await login.validate(sessionTokenOf(ctx))) !== undefined }
}

const json = (body: unknown, headers?: Record<string, string>): HttpResult => ({ status: 200, body, headers: { 'Cache-Control': 'no-store', ...headers } })
const bodyOf = (ctx: HandlerContext) => (ctx.body && typeof ctx.body === 'object' ? (ctx.body as Record<string, unknown>) : {})

const page: Handler = (ctx) => {
  const { html, headers } = renderAdminPage({ unlockMessage: ctx.services.shadow.overlord.unlockMessage })
  return { status: 200, body: html, contentType: 'text/html; charset=utf-8', headers }
}

/**
 * Thin handlers of the shadow tier: HTTP in, one call of the `ShadowOverlord` facade, HTTP out. Errors are
 * `ShadowError`s mapped by the error catalogue. `agent_id` arrives percent-decoded (`%2F` → `/`).
 */
export const shadowHandlers = {
  createShadowChallenge: async (ctx) => json(await ctx.services.shadow.overlord.challenge(bodyOf(ctx))),
  verifyShadowChallenge: async (ctx) => json(await ctx.services.shadow.overlord.verify(bodyOf(ctx))),
  getCabinetPreflight: async (ctx) => json(await ctx.services.shadow.overlord.preflight(callerOf(ctx), ctx.params.co!)),
  provisionCabinet: async (ctx) => json(await ctx.services.shadow.overlord.provision(callerOf(ctx), ctx.params.co!, bodyOf(ctx))),
  clearCabinet: async (ctx) => json(await ctx.services.shadow.overlord.clear(callerOf(ctx), ctx.params.co!, bodyOf(ctx))),
  vaultSign: async (ctx) => json(await ctx.services.shadow.overlord.sign(callerOf(ctx), ctx.params.agent_id!, bodyOf(ctx))),
  releaseKey: async (ctx) => json(await ctx.services.shadow.overlord.releaseKey(callerOf(ctx), ctx.params.agent_id!, bodyOf(ctx)), { Pragma: 'no-cache' }),
  reunlockVault: async (ctx) => json(await ctx.services.shadow.overlord.reunlock(callerOf(ctx), ctx.body === undefined || ctx.body === null ? undefined : bodyOf(ctx))),
  getCabinetRoster: async (ctx) => ({ status: 200, body: await ctx.services.shadow.overlord.roster(ctx.params.co!) }),
  getCabinetPage: page,
  getCabinetHtml: page,
  getShadowOverlordPage: page,
} satisfies Partial<Record<OperationId, Handler>>
