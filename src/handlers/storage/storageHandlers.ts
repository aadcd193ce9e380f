import type { OperationId } from '../../../generated/gateway/operationIds.js'
import { mcpDiscovery } from '../../mcp/mcpDiscovery.js'
import type { Handler } from '../types.js'

const version = (v: unknown): 1 | 2 | undefined => (v === 1 || v === 2 ? v : undefined)

/**
 * Thin handlers of paid storage. `storeFile` hands the untouched request stream (multipart is not parsed
 * by the router) to `StorageService.store`; errors are catalogued codes (`storageErrorRows` in ./errorRows.ts).
 */
export const storageHandlers = {
  storeFile: async (ctx) => {
    // ctx.ip: the proxy-aware client address (SERVICE_TRUST_PROXY), which the intake's per-address bounds count
    const outcome = await ctx.services.storage.store(ctx.raw, ctx.path, { version: version(ctx.query.x402Version), clientAddress: ctx.ip })
    return { status: outcome.status, body: outcome.body, headers: { 'Cache-Control': 'no-store', ...outcome.headers } }
  },
  quoteStore: async (ctx) => {
    const { body, headers } = await ctx.services.storage.quote(BigInt(ctx.query.bytes as number), {
      mimeType: ctx.query.mime_type as string | undefined,
      version: version(ctx.query.x402Version),
    })
    return { status: 200, body, headers: { 'Cache-Control': 'no-store', ...headers } }
  },
  getX402Discovery: async (ctx) => {
    const { storage, costPayments, mcp, config } = ctx.services
    const document = await storage.discovery()
    // the MCP tools beside /store: per-byte storage (the same rails and price), per-call model time past the quota
    const item = document.items[0]!
    // the tools `/mcp` serves here (a left-out domain's are neither served nor announced)
    const served = mcp.served && new Set(mcp.served(ctx).map((tool) => tool.name))
    const tools = mcpDiscovery({
      origin: config.publicOrigin,
      catalog: served ? mcp.catalog.filter((tool) => served.has(tool.name)) : mcp.catalog,
      storageNetworks: item.accepts.map((a) => a.network),
      costNetworks: costPayments.enabled ? costPayments.requirements({ method: 'POST', path: '/mcp' }).map((r) => r.network) : [],
      mibAmount: item.price.example.amount,
      perCallAtomic: costPayments.enabled ? costPayments.priceAtomic : null,
    })
    return {
      status: 200,
      body: { ...document, resources: [...document.resources, tools.endpoint], mcp: tools },
      headers: { 'Cache-Control': 'public, max-age=60' },
    }
  },
  getUpload: async (ctx) => ({
    status: 200,
    body: await ctx.services.storage.getUpload(ctx.params.upload_id!),
    headers: { 'Cache-Control': 'no-store' },
  }),
} satisfies Partial<Record<OperationId, Handler>>
