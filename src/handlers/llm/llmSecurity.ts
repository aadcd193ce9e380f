import { LLM_KEY_PREFIX } from '../../llm/LlmKeys.js'
import type { DomainSetup, HandlerContext } from '../types.js'

function bearerOf(ctx: HandlerContext): string | undefined {
  const header = ctx.headers.authorization
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header.trim()) : null
  return match?.[1]
}

/** An LLM API key (`sk-p2s-…`) or a session token: the caller it names, kept in `ctx.locals`. */
async function validateToken(ctx: HandlerContext, token: string) {
  if (token.startsWith(LLM_KEY_PREFIX)) {
    const key = await ctx.services.llmKeys.validate(token)
    if (key) ctx.locals.apiKey = key
    return key
  }
  const session = await ctx.services.login.validate(token)
  if (session) ctx.locals.session = session
  return session
}

/**
 * The `llmBearer` scheme of `/llm/v1`: `Authorization: Bearer` with the session token (`st_…`) — the stock
 * `openai` client sends its `apiKey` that way — or with one of the wallet's API keys (`sk-p2s-…`).
 */
export const llmSecurity: Pick<DomainSetup, 'securityHandlers'> = {
  securityHandlers: {
    // Without its credential a scheme answers at once (no promise): the security stage then decides sooner.
    llmBearer: (ctx: HandlerContext) => {
      const token = bearerOf(ctx)
      return token ? validateToken(ctx, token) : undefined
    },
    // The Anthropic SDKs send their `apiKey` as `x-api-key`: the same tokens, the same checks.
    llmApiKey: (ctx: HandlerContext) => {
      const header = ctx.headers['x-api-key']
      const token = typeof header === 'string' ? header.trim() : ''
      return token ? validateToken(ctx, token) : undefined
    },
  },
}
