/**
 * Paid-storage handlers (issue 6) — owned by the storage engineer. `storeFile` reads the multipart body
 * from `ctx.raw` (the router does not read or validate non-JSON bodies). Replace the stubs, provide
 * `initStorage`, add error codes to `../errorCatalogue.ts`. See `../index.ts`.
 */
import type { OperationId } from '../../../generated/gateway/operationIds.js'
import { type DomainInit, type Handler, notImplemented } from '../types.js'

export const storageHandlers = {
  storeFile: notImplemented,
  getUpload: notImplemented,
} satisfies Partial<Record<OperationId, Handler>>

export const initStorage: DomainInit = () => ({})
