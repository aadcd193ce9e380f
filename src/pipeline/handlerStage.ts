import type { GatewayLocals, Handler, HandlerContext, Services } from '../handlers/types.js'
import type { HttpResult, RequestContext } from '../shared/http/index.js'

/**
 * Stage 7, handlers: each handler of the map sees the validated request plus `ctx.services`. Handlers are
 * thin (request → core call → result); the map is built from the plug-ins (`src/handlers/plugins.ts`).
 */
export function handlerStage(
  handlers: Partial<Record<string, Handler>>,
  services: Services,
): Record<string, (ctx: RequestContext<GatewayLocals>) => Promise<HttpResult> | HttpResult> {
  const bound: Record<string, (ctx: RequestContext<GatewayLocals>) => Promise<HttpResult> | HttpResult> = {}
  for (const [operationId, handler] of Object.entries(handlers)) {
    if (handler) bound[operationId] = (ctx) => handler(Object.assign(ctx, { services }) as HandlerContext)
  }
  return bound
}
