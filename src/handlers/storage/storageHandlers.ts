import type { OperationId } from '../../../generated/gateway/operationIds.js'
import type { Handler } from '../types.js'
import './storageInit.js'

/**
 * Thin handlers of paid storage. `storeFile` hands the untouched request stream (multipart is not parsed
 * by the router) to `StorageService.store`; errors are catalogued codes (`storageErrorRows`).
 */
export const storageHandlers = {
  storeFile: async (ctx) => {
    const outcome = await ctx.services.storage.store(ctx.raw, ctx.path)
    return { status: outcome.status, body: outcome.body, headers: { 'Cache-Control': 'no-store', ...outcome.headers } }
  },
  getUpload: async (ctx) => ({
    status: 200,
    body: await ctx.services.storage.getUpload(ctx.params.upload_id!),
    headers: { 'Cache-Control': 'no-store' },
  }),
} satisfies Partial<Record<OperationId, Handler>>
