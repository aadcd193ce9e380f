/**
 * MCP on `POST /mcp`: requests drawn from the tools the document lists (`x-mcp-tools`: a `tools/call` of each
 * tool with arguments from its input schema, sometimes broken, beside `tools/list`, `initialize` and `ping`), and
 * the check of every `tools/call` result against the tool: `content` a list of content blocks; without `isError`,
 * `structuredContent` valid against the `outputSchema` the server lists for the tool (`tools/list`) and one of the
 * tool's documented outputs; with `isError`, `structuredContent` (when present) one of the documented outputs or
 * the `Error` body.
 */
import type { ValidateFunction } from 'ajv'
import fc from 'fast-check'
import { createAjv } from '../../src/shared/http/index.js'
import type { CheckResult } from './checks.js'
import type { McpToolDoc, Operation } from './operations.js'
import type { FuzzRequest } from './requestArbitrary.js'
import { schemaArbitrary } from './schemaArbitrary.js'

type Schema = Record<string, unknown>
export type McpTool = McpToolDoc & { outputSchema?: Schema }
export type McpTools = Map<string, McpTool>

const ajv = createAjv()
const compiled = new WeakMap<object, ValidateFunction>()
const validator = (schema: Schema) => {
  let v = compiled.get(schema)
  if (!v) compiled.set(schema, (v = ajv.compile(schema)))
  return v
}

export const MCP_ACCEPT = 'application/json, text/event-stream'

export function mcpToolsOf(op: Operation | undefined): McpTools {
  return new Map((op?.mcpTools ?? []).map((t) => [t.name, { ...t }]))
}

/** Adds the output schemas the live server lists (`tools/list`) to the documented tools. */
export function addListedTools(tools: McpTools, listed: unknown): void {
  const list = (listed as { result?: { tools?: { name?: unknown; outputSchema?: unknown }[] } })?.result?.tools ?? []
  for (const t of list) {
    const tool = typeof t.name === 'string' ? tools.get(t.name) : undefined
    if (tool && t.outputSchema && typeof t.outputSchema === 'object') tool.outputSchema = t.outputSchema as Schema
  }
}

/** JSON-RPC messages of the MCP client a partner writes: calls of each documented tool, valid or not. */
export function mcpRequestArbitrary(op: Operation, tools: McpTools, headers: Record<string, string>): fc.Arbitrary<FuzzRequest> {
  const list = [...tools.values()]
  const call = list.length
    ? fc.constantFrom(...list).chain((tool) =>
        fc.record({
          name: fc.constant(tool.name),
          arguments: fc.oneof({ arbitrary: schemaArbitrary(tool.input), weight: 4 }, { arbitrary: fc.constantFrom<unknown>({}, { unexpected: true }, null, []), weight: 1 }),
        }),
      )
    : fc.constant({ name: 'none', arguments: {} })
  const message = fc.oneof(
    { arbitrary: call.map((params) => ({ method: 'tools/call', params })), weight: 6 },
    { arbitrary: fc.constant({ method: 'tools/list', params: {} }), weight: 1 },
    { arbitrary: fc.constant({ method: 'ping' }), weight: 1 },
    { arbitrary: fc.constant({ method: 'initialize', params: { protocolVersion: headers['mcp-protocol-version'] ?? '2025-06-18', capabilities: {}, clientInfo: { name: 'conformance-fuzz', version: '1.0.0' } } }), weight: 1 },
  )
  return fc.tuple(message, fc.nat({ max: 1_000_000 })).map(([m, id]) => ({
    operation: op.id,
    mutation: 'valid',
    method: 'POST',
    path: op.path,
    headers: { ...headers, 'content-type': 'application/json' },
    body: { text: JSON.stringify({ jsonrpc: '2.0', id, ...m }) },
  }))
}

const contentBlock = (b: unknown) => Boolean(b) && typeof b === 'object' && typeof (b as { type?: unknown }).type === 'string' && ((b as { type: string }).type !== 'text' || typeof (b as { text?: unknown }).text === 'string')

/** The check of a `tools/call` result, when the request was one and the answer carries a result. */
export function mcpResultCheck(tools: McpTools, errorSchema: Schema | undefined, requestText: string | undefined, responseText: string): CheckResult | undefined {
  let request: { method?: unknown; params?: { name?: unknown } }
  let response: { result?: { content?: unknown; structuredContent?: unknown; isError?: unknown } }
  try {
    request = JSON.parse(requestText ?? '') as typeof request
    response = JSON.parse(responseText) as typeof response
  } catch {
    return undefined
  }
  if (request?.method !== 'tools/call' || !response?.result || typeof request.params?.name !== 'string') return undefined
  const tool = tools.get(request.params.name)
  if (!tool) return undefined
  const result = response.result
  const problems: string[] = []
  if (!Array.isArray(result.content) || !result.content.every(contentBlock)) problems.push('content is not a list of content blocks')
  const matchesOutput = (value: unknown) => tool.outputs.some((s) => validator(s)(value))
  if (result.isError === true) {
    if (result.structuredContent !== undefined && !matchesOutput(result.structuredContent) && !(errorSchema && validator(errorSchema)(result.structuredContent)))
      problems.push('the error result’s structuredContent is neither a documented output nor the Error body')
  } else {
    if (tool.outputSchema) {
      const validate = validator(tool.outputSchema)
      if (!validate(result.structuredContent)) problems.push(`structuredContent does not match the outputSchema of ${tool.name}: ${ajv.errorsText(validate.errors)}`)
    }
    if (result.structuredContent !== undefined && !matchesOutput(result.structuredContent)) problems.push(`structuredContent is none of the documented outputs of ${tool.name}`)
  }
  return { check: 'mcp_tool_result', problem: problems.length ? `${tool.name}: ${problems.join('; ')}` : undefined }
}
