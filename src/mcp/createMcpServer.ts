import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { McpCaller, McpTools } from './McpTools.js'

export type McpRequestInfo = {
  caller: McpCaller | undefined
  clientAddress: string | undefined
  /** Aborted when the HTTP client goes away. */
  signal: AbortSignal
}

/**
 * The MCP server of one request (the endpoint is stateless: a server and a transport per POST, as the SDK's
 * stateless mode wants): `tools/list` from the document's catalogue, `tools/call` to `McpTools`.
 */
export function createMcpServer(tools: McpTools, info: McpRequestInfo, version: string): Server {
  const server = new Server({ name: 'pay2store-gateway', version }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.catalog.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args, _meta: meta } = request.params
    if (!tools.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
    return tools.call({ name, arguments: args ?? {}, meta: meta as Record<string, unknown> | undefined, caller: info.caller, clientAddress: info.clientAddress, signal: info.signal })
  })
  return server
}
