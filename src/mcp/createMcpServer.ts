import { ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server'
import type { McpCaller, McpTools } from './McpTools.js'

export type McpRequestInfo = {
  caller: McpCaller | undefined
  clientAddress: string | undefined
  /** Aborted when the HTTP client goes away. */
  signal: AbortSignal
  /**
   * A `sign-in-with-x` proof sent in a call's `_meta["sign-in-with-x"]` (for clients that cannot set the HTTP
   * header): the caller it proves, or undefined. Used only when the request named no caller.
   */
  signIn?: (proof: unknown) => Promise<McpCaller | undefined>
}

/** `_meta` key of a sign-in-with-x proof in a tool call (the header's base64 payload, or the payload object). */
export const META_SIGN_IN_WITH_X = 'sign-in-with-x'

/**
 * How long a client may reuse the tool list and the discovery answer (MCP 2026-07-28 cache hints): the list is
 * this deployment's document, the same for every caller, until the gateway is redeployed.
 */
const LIST_CACHE = { ttlMs: 300_000, cacheScope: 'public' as const }

/**
 * The MCP server of one request (the endpoint is stateless: a server per POST, for either protocol era — the
 * SDK's 2026-07-28 per-request envelope or a 2025-11-25 client's stateless fallback): `tools/list` from the
 * document's catalogue, `tools/call` to `McpTools`. The SDK answers `server/discover`, stamps `resultType`, and
 * fills the list results' `ttlMs`/`cacheScope` from the hints below on the 2026 revision.
 */
export function createMcpServer(tools: McpTools, info: McpRequestInfo, version: string): Server {
  const server = new Server({ name: 'pay2store-gateway', version }, { capabilities: { tools: {} }, cacheHints: { 'tools/list': LIST_CACHE, 'server/discover': LIST_CACHE } })
  const outputSchemas = new Map(tools.catalog.map((t) => [t.name, t.outputSchema as Record<string, unknown>]))
  server.setRequestHandler('tools/list', () => ({
    tools: tools.catalog.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema, outputSchema: t.outputSchema })),
  }))
  server.setRequestHandler('tools/call', async (request) => {
    const { name, arguments: args, _meta: meta } = request.params
    // an unknown tool is a protocol error; arguments that do not fit the tool's schema are a tool result (isError)
    if (!tools.has(name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`)
    const proof = (meta as Record<string, unknown> | undefined)?.[META_SIGN_IN_WITH_X]
    const signIn = info.signIn
    const identify = proof !== undefined && signIn ? () => signIn(proof) : undefined
    const result = await tools.call({ name, arguments: args ?? {}, meta: meta as Record<string, unknown> | undefined, caller: info.caller, clientAddress: info.clientAddress, signal: info.signal }, identify)
    return server.projectCallToolResult(result, outputSchemas.get(name))
  })
  return server
}
