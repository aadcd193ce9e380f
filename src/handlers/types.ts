import type { HttpResult } from '../shared/http/index.js'
import type { HandlerContext } from '../services/types.js'

export type { CoreServices, DomainInit, DomainSetup, ErrorMapping, GatewayLocals, HandlerContext, RosterMember, Services } from '../services/types.js'

/** A handler: validated request → call of a core function → `{status, body, headers}`. */
export type Handler = (ctx: HandlerContext) => HttpResult | Promise<HttpResult>
