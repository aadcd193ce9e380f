import { bazaarMcpExtensions } from '../x402/index.js'
import type { McpToolSpec } from './toolCatalog.js'

/** The Bazaar declaration of a paid tool (`info.input.type: mcp`), as its 402 results and discovery carry it. */
export function mcpToolExtensions(tool: McpToolSpec): Record<string, unknown> {
  return bazaarMcpExtensions({ toolName: tool.name, description: tool.description, inputSchema: tool.inputSchema })
}

/** `X402DiscoveryMcp` of the document: the endpoint and every tool with its price. */
export type McpDiscovery = {
  endpoint: string
  transport: 'streamable-http'
  tools: {
    name: string
    description: string
    price: { kind: 'free' | 'per_byte' | 'per_call'; amount?: string; example?: { size_bytes: number; amount: string } }
    networks?: string[]
    extensions?: Record<string, unknown>
  }[]
}

export type McpDiscoveryInput = {
  origin: string
  catalog: McpToolSpec[]
  /** The networks `/store` accepts (every rail), and those a cost call accepts. */
  storageNetworks: string[]
  costNetworks: string[]
  /** What 1 MiB costs to store now (`/store`'s price rule). */
  mibAmount: string
  /** Price of one call past the quota; null: paying past the quota is not configured. */
  perCallAtomic: bigint | null
}

/** The MCP tools for `GET /.well-known/x402`: free tools, per-byte storage, per-call model time past the quota. */
export function mcpDiscovery(input: McpDiscoveryInput): McpDiscovery {
  return {
    endpoint: `${input.origin}/mcp`,
    transport: 'streamable-http',
    tools: input.catalog.map((tool) => {
      const base = { name: tool.name, description: tool.description }
      if (tool.payment === 'storage') {
        return { ...base, price: { kind: 'per_byte' as const, example: { size_bytes: 1_048_576, amount: input.mibAmount } }, networks: input.storageNetworks, extensions: mcpToolExtensions(tool) }
      }
      if (tool.payment === 'cost' && input.perCallAtomic !== null) {
        return { ...base, price: { kind: 'per_call' as const, amount: input.perCallAtomic.toString() }, networks: input.costNetworks, extensions: mcpToolExtensions(tool) }
      }
      return { ...base, price: { kind: 'free' as const } }
    }),
  }
}
