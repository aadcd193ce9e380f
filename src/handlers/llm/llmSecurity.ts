import { LLM_KEY_PREFIX } from '../../llm/LlmKeys.js'
import type { DomainSetup, HandlerContext } from '../types.js'

function bearerOf(ctx: HandlerContext): string | undefined {
  const header = ctx.headers.authorization
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header.trim()) : null
  return match?.[1]
}

/**
 * The `llmBearer` scheme of `/llm/v1`: `Authorization: Bearer` with the session token (`st_…`) — the stock
 * `openai` client sends its `apiKey` that way — or with one of the wallet's API keys (`sk-p2s-…`).
 */
export const llmSecurity: Pick<DomainSetup, 'securityHandlers'> = {
  securityHandlers: {
    llmBearer: async (ctx: HandlerContext) => {
      const token = bearerOf(ctx)
      if (!token) return undefined
      if (token.startsWith(LLM_KEY_PREFIX)) {
        const key = await ctx.services.llmKeys.validate(token)
        if (key) ctx.locals.apiKey = key
        return key
      }
      const session = await ctx.services.login.validate(token)
      if (session) ctx.locals.session = session
      return session
    },
  },
}
