import { createAjv } from '../shared/http/createAjv.js'
import { pointerTarget } from '../shared/http/localRefs.js'

/** How a tool is paid: not at all, like `POST /store` (per byte), or like the cost routes (quota, then per call). */
export type ToolPayment = 'none' | 'storage' | 'cost'

export type JsonSchemaObject = { type: 'object'; [key: string]: unknown }

/** One MCP tool as `x-mcp-tools` of `POST /mcp` declares it, its schemas self-contained (every `$ref` inlined). */
export type McpToolSpec = {
  name: string
  description: string
  payment: ToolPayment
  inputSchema: JsonSchemaObject
  /** The tool's results, an x402 requirement where it is paid, and the `Error` body of a refusal. */
  outputSchema: JsonSchemaObject
  /** Checks a call's `arguments` against `inputSchema`: what is wrong, or `undefined`. */
  checkArguments: (args: unknown) => string | undefined
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The MCP tools of the OpenAPI document (`paths./mcp.post.x-mcp-tools`), read once at start: the schemas are
 * the document's components, never written a second time. MCP wants each schema self-contained, so every
 * `$ref` is inlined; annotations only the document needs (`x-*`, `example(s)`) are dropped.
 */
export function loadMcpToolCatalog(document: Record<string, unknown>): McpToolSpec[] {
  const post = (document.paths as Record<string, Record<string, Record<string, unknown>>> | undefined)?.['/mcp']?.post
  const declared = post?.['x-mcp-tools']
  if (!Array.isArray(declared) || declared.length === 0) throw new Error('openapi: POST /mcp declares no x-mcp-tools')
  const inline = (node: unknown) => inlineRefs(document, node, [])
  const errorSchema = inline({ $ref: '#/components/schemas/Error' })
  const ajv = createAjv()
  return declared.map((entry: unknown) => {
    if (!isObject(entry) || typeof entry.name !== 'string' || typeof entry.description !== 'string' || !Array.isArray(entry.outputs)) {
      throw new Error(`openapi: malformed x-mcp-tools entry ${JSON.stringify(entry)}`)
    }
    const payment = entry.payment
    if (payment !== 'none' && payment !== 'storage' && payment !== 'cost') throw new Error(`openapi: x-mcp-tools ${entry.name}: payment must be none, storage or cost`)
    const input = inline(entry.input)
    if (!isObject(input) || input.type !== 'object') throw new Error(`openapi: x-mcp-tools ${entry.name}: input must be an object schema`)
    const validate = ajv.compile(input)
    return {
      name: entry.name,
      description: entry.description,
      payment,
      inputSchema: input as JsonSchemaObject,
      checkArguments: (args: unknown) => (validate(args) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'arguments' })),
      outputSchema: { type: 'object', anyOf: [...entry.outputs.map(inline), errorSchema] },
    }
  })
}

function inlineRefs(document: Record<string, unknown>, node: unknown, seen: string[]): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(document, item, seen))
  if (!isObject(node)) return node
  const out: Record<string, unknown> = {}
  if (typeof node.$ref === 'string') {
    const ref = node.$ref
    if (seen.includes(ref)) throw new Error(`openapi: ${ref} refers to itself; an MCP tool schema cannot inline it`)
    Object.assign(out, inlineRefs(document, resolvePointer(document, ref), [...seen, ref]))
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' || key.startsWith('x-') || key === 'example' || key === 'examples') continue
    // `properties` maps names to schemas: a property may be called `example` (not an annotation there)
    out[key] = key === 'properties' && isObject(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inlineRefs(document, v, seen)])) : inlineRefs(document, value, seen)
  }
  return out
}

function resolvePointer(document: Record<string, unknown>, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`openapi: only local $refs are supported (${ref})`)
  const node = pointerTarget(document, ref)
  if (node === undefined) throw new Error(`openapi: ${ref} does not resolve`)
  return node
}
