import type { CallToolResult } from '@modelcontextprotocol/server'

/** Who calls, when the request named someone (session token or `/llm` key); tools that need it refuse without. */
export type McpCaller = { wallet: string; tier: 'overlord' | 'session' | 'api_key' }

/** A metered answer as the cost routes give it (`meterCostCall`): status, body, headers. */
export type MeteredAnswer = { status: number; body?: unknown; headers?: Record<string, unknown> | undefined }

export type ToolCall = {
  name: string
  arguments: Record<string, unknown>
  /** The request's `_meta` (where x402 puts the payment). */
  meta: Record<string, unknown> | undefined
  caller: McpCaller | undefined
  /** The client's address as the gateway sees it (the store intake's per-address bounds). */
  clientAddress: string | undefined
  signal: AbortSignal
}

/** What a tool is handed beside its call: the Bazaar declaration its 402 results carry (paid tools only). */
export type ToolContext = { extensions: Record<string, unknown> | undefined }

/**
 * One MCP tool's behaviour, contributed by the domain whose service it calls (its schemas are the document's
 * `x-mcp-tools` entry of the same name). Called only with arguments that fit the input schema; a refusal is a
 * thrown catalogued error (answered as a tool result with its `Error` body) or a result of its own.
 */
export type McpTool = {
  readonly name: string
  call(call: ToolCall, context: ToolContext): Promise<CallToolResult>
}

/** The resource every MCP payment binds (requirements, Algorand note): the endpoint itself. */
export const MCP_PATH = '/mcp'
