import type { McpTool } from '../../mcp/McpTools.js'
import { storageTools } from '../../mcp/tools/storageTools.js'
import type { HandlerContext } from '../types.js'

/** Paid storage's MCP tools over one request's services: `quote_storage`, `store_file`, `verify_upload`. */
export function storageMcpTools(ctx: HandlerContext): McpTool[] {
  const { services } = ctx
  return storageTools({ storage: services.storage, publicOrigin: services.config.publicOrigin, config: services.mcp.config })
}
