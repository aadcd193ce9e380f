import type { OperationId } from '../../generated/gateway/operationIds.js'
import type { McpTool } from '../mcp/McpTools.js'
import type { DomainPlugin } from '../services/DomainPlugin.js'
import type { Handler, HandlerContext } from './types.js'

/**
 * A domain plug-in as the HTTP side sees it: the service graph's plug-in (`create`, and `security`: the
 * schemes the domain answers, its …Security.ts) plus the operations it handles and the rows it adds to the
 * error catalogue. A plug-in left out of the app's list contributes no handler: its operations
 * answer `notBuilt` (when the document declares that status for them) or the router's 501.
 */
export type HttpPlugin = DomainPlugin & {
  /** operationId → handler, for the operations of `openapi/gateway.yaml` this domain answers. */
  readonly handlers: Partial<Record<OperationId, Handler>>
  /** The domain's rows of the error catalogue (its ./<domain>/errorRows.ts): the app's catalogue is the core's rows and its plug-ins' (`catalogueOf`), one status per code. */
  readonly errorRows: Readonly<Record<string, { status: number }>>
  /**
   * The MCP tools the domain serves on `POST /mcp`, over one request's services (their schemas are the document's
   * `x-mcp-tools`): a domain left out of the app's list leaves its tools out of `tools/list`.
   */
  readonly mcpTools?: (ctx: HandlerContext) => readonly McpTool[]
  /** The refusal of the domain's operations while it is not built: its code (the catalogue gives the status, which an operation must declare) and the error. */
  readonly notBuilt?: { code: string; error: (ctx: HandlerContext) => Error }
}
