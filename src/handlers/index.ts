/**
 * The gateway's handler map: every operationId of `openapi/gateway.yaml` → its handler. The `satisfies`
 * below turns a missing handler into a compile error.
 *
 * HOW TO PLUG IN: each domain owns its folder here (./shadow, ./storage, ./batch, ./llm) with a `plugin.ts`
 * (./HttpPlugin.ts): its services (built by the service graph from the plug-in's `create`), handlers,
 * security schemes and error rows; ./plugins.ts lists the plug-ins once. The core's operations (./core,
 * ./mcp, ./x402) are always on.
 * - Handlers are `(ctx: HandlerContext) => {status, body?, headers?, contentType?, stream?}` (./types.ts);
 *   they translate the validated request into a call of a service. `ctx.body` is the parsed and validated
 *   JSON; non-JSON bodies (multipart) are left unread on `ctx.raw`. `ctx.services` is the one service graph
 *   (src/services/createServiceGraph.ts builds every service; src/services/types.ts lists them).
 * - Throw `BaseError`s with a `code`; add the code's status to the rows of its plug-in (./<domain>/errorRows.ts) or of the core (./errorCatalogue.ts).
 * - Security: a domain's scheme (`overlordBearer`, `llmBearer`) is answered in its folder's …Security.ts and
 *   joined to the domain's `create` with `withSecurity`; the session gate is the core's.
 * - Every response is validated against the document in tests: a mismatch turns into a 500.
 */
import type { OperationId } from '../../generated/gateway/operationIds.js'
import { batchPlugin } from './batch/plugin.js'
import { llmPlugin } from './llm/plugin.js'
import { coreOperationHandlers } from './plugins.js'
import { shadowPlugin } from './shadow/plugin.js'
import { storagePlugin } from './storage/plugin.js'
import { initBatch } from './batch/index.js'
import { initLlm } from './llm/index.js'
import { initShadow } from './shadow/index.js'
import { initStorage } from './storage/index.js'
import type { DomainInit, Handler } from './types.js'

export const handlers = {
  ...coreOperationHandlers,
  ...shadowPlugin.handlers,
  ...storagePlugin.handlers,
  ...batchPlugin.handlers,
  ...llmPlugin.handlers,
} satisfies Record<OperationId, Handler>

/** The plug-ins' start hooks, in the list's order (a domain list written before plug-ins; see ./plugins.ts). */
export const domainInits: DomainInit[] = [initShadow, initStorage, initBatch, initLlm]
