import { declareDiscoveryExtension } from '@x402/extensions/bazaar'

export type BodyDiscovery = {
  method: 'POST' | 'PUT' | 'PATCH'
  bodyType: 'json' | 'form-data' | 'text'
  /** An example request body. */
  input: Record<string, unknown>
  /** JSON Schema of the request body (`properties`, `required`). */
  inputSchema: Record<string, unknown>
  /** An example of the paid answer. */
  outputExample: unknown
}

/**
 * `extensions` of a 402 declaring the x402 Bazaar discovery extension (`{bazaar: {info, schema}}`) for a
 * body-carrying route, built by the reference package so discovery services and facilitators that
 * validate `info` against `schema` index the route.
 */
export function bazaarExtensions(route: BodyDiscovery): Record<string, unknown> {
  const { bazaar } = declareDiscoveryExtension({
    bodyType: route.bodyType,
    input: route.input,
    inputSchema: route.inputSchema,
    output: { example: route.outputExample },
  }) as unknown as { bazaar: { info: { input: Record<string, unknown> } } & Record<string, unknown> }
  // The reference resource server fills `method` in from the live request; we know it up front. Its schema
  // already allows it (`enum: [POST, PUT, PATCH]`).
  return { bazaar: { ...bazaar, info: { ...bazaar.info, input: { ...bazaar.info.input, method: route.method } } } }
}

/** An MCP tool as the Bazaar extension declares it (`info.input.type: mcp`). */
export type McpToolDiscovery = {
  toolName: string
  description: string
  /** JSON Schema of the tool's arguments. */
  inputSchema: Record<string, unknown>
  example?: Record<string, unknown>
  outputExample?: unknown
}

/**
 * `extensions` declaring an MCP tool for the x402 Bazaar (`{bazaar: {info, schema}}`, `info.input.type: mcp`,
 * transport `streamable-http`), built by the reference package, for the tool's 402 results and the discovery
 * document.
 */
export function bazaarMcpExtensions(tool: McpToolDiscovery): Record<string, unknown> {
  return declareDiscoveryExtension({
    toolName: tool.toolName,
    description: tool.description,
    transport: 'streamable-http',
    inputSchema: tool.inputSchema,
    ...(tool.example ? { example: tool.example } : {}),
    ...(tool.outputExample !== undefined ? { output: { example: tool.outputExample } } : {}),
  }) as unknown as Record<string, unknown>
}
