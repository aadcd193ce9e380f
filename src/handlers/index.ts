/**
 * The gateway's handler map: every operationId of `openapi/gateway.yaml` → its handler. The `satisfies`
 * below turns a missing handler into a compile error.
 *
 * HOW TO PLUG IN: each domain owns its folder here (./shadow, ./storage, ./batch, ./llm, ./core, ./mcp, ./x402).
 * - Handlers are `(ctx: HandlerContext) => {status, body?, headers?, contentType?, stream?}` (./types.ts);
 *   they translate the validated request into a call of a service. `ctx.body` is the parsed and validated
 *   JSON; non-JSON bodies (multipart) are left unread on `ctx.raw`. `ctx.services` is the one service graph
 *   (src/services/createServiceGraph.ts builds every service; src/services/types.ts lists them).
 * - Throw `BaseError`s with a `code`; add the code's status to ./errorCatalogue.ts (the one mapping).
 * - Security: a domain's scheme (`overlordBearer`, `llmBearer`) is answered in its folder's …Security.ts and
 *   joined to the domain below with `withSecurity`; the session gate is the core's.
 * - Every response is validated against the document in tests: a mismatch turns into a 500.
 */
import type { OperationId } from '../../generated/gateway/operationIds.js'
import { batchHandlers, initBatch } from './batch/index.js'
import { coreHandlers } from './core/index.js'
import { initLlm, llmHandlers } from './llm/index.js'
import { mcpHandlers } from './mcp/index.js'
import { initShadow, shadowHandlers } from './shadow/index.js'
import { initStorage, storageHandlers } from './storage/index.js'
import type { DomainInit, Handler } from './types.js'
import { x402Handlers } from './x402/index.js'

export const handlers = {
  ...coreHandlers,
  ...shadowHandlers,
  ...storageHandlers,
  ...batchHandlers,
  ...llmHandlers,
  ...mcpHandlers,
  ...x402Handlers,
} satisfies Record<OperationId, Handler>

/** The service graph's domains with the security schemes they answer, built in this order by `createApp`. */
export const domainInits: DomainInit[] = [initShadow, initStorage, initBatch, initLlm]
