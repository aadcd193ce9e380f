import type { DomainSetup, HandlerContext } from '../types.js'
import { callerOf, verifiedCallerOf } from './shadowHandlers.js'
import { errorsOf } from '../errorCatalogue.js'

/**
 * The `overlordBearer` scheme of the shadow tier, over the tier the service graph built (`ctx.services.shadow`):
 * the bearer is checked before the body is read; a turned-away request is audited with its precise code.
 */
export const shadowSecurity: Pick<DomainSetup, 'securityHandlers' | 'unauthorized'> = {
  securityHandlers: { overlordBearer: (ctx: HandlerContext) => ctx.services.shadow.overlord.authenticate(callerOf(ctx)) },
  unauthorized: {
    overlordBearer: async (ctx: HandlerContext) => {
      const target = ctx.params.co ?? ctx.params.agent_id ?? ''
      const error = await ctx.services.shadow.overlord.rejectUnauthenticated(await verifiedCallerOf(ctx), ctx.operationId, target)
      // every shadow code has its row in the shadow plug-in's rows (checked by their type)
      return errorsOf(ctx).toResult(error)!
    },
  },
}
