/**
 * The gateway's handler map: every operationId of `openapi/gateway.yaml` → its handler. The `satisfies`
 * below turns a missing handler into a compile error.
 *
 * HOW TO PLUG IN (shadow, storage, batch engineers): each domain owns its folder here —
 *   ./shadow/index.ts  → `shadowHandlers`, `initShadow`
 *   ./storage/index.ts → `storageHandlers`, `initStorage`
 *   ./batch/index.ts   → `batchHandlers`, `initBatch`
 * - Handlers are `(ctx: HandlerContext) => {status, body?, headers?, contentType?, stream?}` (./types.ts);
 *   they translate the validated request into a call of your core module. `ctx.body` is the parsed and
 *   validated JSON; non-JSON bodies (multipart) are left unread on `ctx.raw`. `ctx.services` has the core
 *   services; add yours by declaration merging (`declare module '../types.js' { interface Services {…} }`)
 *   and create them in your `init` (it gets the config, db, catalogue, logger, env).
 * - Throw `BaseError`s with a `code`; add the code's status to ./errorCatalogue.ts (the one mapping).
 * - Security: `securityHandlers.overlordBearer` from your init decides the bearer scheme (truthy = ok);
 *   `unauthorized.overlordBearer` shapes the 401. The session gate is the core's.
 * - Every response is validated against the document in tests: a mismatch turns into a 500.
 */
import type { OperationId } from '../../generated/gateway/operationIds.js'
import { batchHandlers, initBatch } from './batch/index.js'
import { coreHandlers } from './core/index.js'
import { initLlm, llmHandlers } from './llm/index.js'
import { initShadow, shadowHandlers } from './shadow/index.js'
import { initStorage, storageHandlers } from './storage/index.js'
import type { DomainInit, Handler } from './types.js'

export const handlers = {
  ...coreHandlers,
  ...shadowHandlers,
  ...storageHandlers,
  ...batchHandlers,
  ...llmHandlers,
} satisfies Record<OperationId, Handler>

/** Domain start hooks, run in this order by `createApp`. */
export const domainInits: DomainInit[] = [initShadow, initStorage, initBatch, initLlm]
