import type { CallToolResult } from '@modelcontextprotocol/server'
import { mcpToolExtensions } from './mcpDiscovery.js'
import type { McpCaller, McpTool, ToolCall } from './McpTool.js'
import type { McpToolSpec } from './toolCatalog.js'
import { errorResult } from './toolResults.js'

export { MCP_PATH, type McpCaller, type McpTool, type MeteredAnswer, type ToolCall } from './McpTool.js'

/** What every tool call goes through, whoever contributed the tool. */
export type McpToolPorts = {
  /**
   * Lets one more tool call of this request through the per-address rate limit, or says when to retry: each
   * tool call counts like a request of its HTTP twin (`undefined`: let through).
   */
  admit?: () => Promise<{ retryAfterS: number } | undefined>
  /** The catalogue's status and `Error` body of a thrown domain error; `undefined`: not catalogued (a fault). */
  describeError: (error: unknown) => { status: number; body?: unknown } | undefined
}

/**
 * The MCP tools of one request, framework-free: the document's tools (`x-mcp-tools`) that a built domain
 * contributes — a domain left out leaves its tools out of `tools/list`. Each tool calls the service its HTTP
 * route calls and turns the outcome into a tool result — x402's MCP transport for payment (`isError` +
 * `PaymentRequired` in `structuredContent`, the payment read from `_meta["x402/payment"]`, the settlement in
 * `_meta["x402/payment-response"]`), the catalogue's `Error` body for any other refusal.
 */
export class McpTools {
  /** The specs of the tools served, in the document's order. */
  readonly catalog: McpToolSpec[]
  readonly #ports: McpToolPorts
  readonly #specs: Map<string, McpToolSpec>
  readonly #tools: Map<string, McpTool>
  /** The Bazaar declaration each paid tool's 402 carries. */
  readonly #extensions: Map<string, Record<string, unknown>>

  constructor(catalog: McpToolSpec[], tools: readonly McpTool[], ports: McpToolPorts) {
    this.#tools = new Map(tools.map((tool) => [tool.name, tool]))
    this.catalog = catalog.filter((spec) => this.#tools.has(spec.name))
    this.#ports = ports
    this.#specs = new Map(this.catalog.map((t) => [t.name, t]))
    this.#extensions = new Map(this.catalog.filter((t) => t.payment !== 'none').map((t) => [t.name, mcpToolExtensions(t)]))
  }

  has(name: string): boolean {
    return this.#specs.has(name)
  }

  /**
   * One tool call: the rate limit, the arguments, then — when the request names no caller — `identify` (a
   * sign-in-with-x proof in `_meta`, used up once checked, so a call refused before it keeps its proof), then the
   * tool. A catalogued refusal anywhere after the checks (the proof's store failing among them) is a tool result.
   */
  async call(call: ToolCall, identify?: () => Promise<McpCaller | undefined>): Promise<CallToolResult> {
    const limited = await this.#ports.admit?.()
    if (limited) {
      return errorResult({ error: 'rate_limited', message: `too many requests; retry after ${limited.retryAfterS} s`, details: { retry_after_s: limited.retryAfterS } })
    }
    const spec = this.#specs.get(call.name)
    const tool = this.#tools.get(call.name)
    if (!spec || !tool) return errorResult({ error: 'unknown_tool', message: `no tool ${call.name}` })
    const problem = spec.checkArguments(call.arguments)
    if (problem) return errorResult({ error: 'invalid_arguments', message: problem })
    try {
      const caller = call.caller ?? (await identify?.())
      return await tool.call({ ...call, caller }, { extensions: this.#extensions.get(call.name) })
    } catch (error) {
      const described = this.#ports.describeError(error)
      if (!described) throw error
      return errorResult(described.body as { error: string; message: string })
    }
  }
}
