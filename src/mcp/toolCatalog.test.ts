import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findRepoRoot } from '../config/findRepoRoot.js'
import { loadOpenApiDocument } from '../shared/http/loadOpenApiDocument.js'
import { loadMcpToolCatalog } from './toolCatalog.js'

const document = loadOpenApiDocument(join(findRepoRoot(), 'openapi', 'gateway.yaml'))

describe('loadMcpToolCatalog', () => {
  const catalog = loadMcpToolCatalog(document)

  it('reads the six tools of x-mcp-tools with self-contained schemas (no $ref, no document-only annotations)', () => {
    expect(catalog.map((t) => [t.name, t.payment])).toEqual([
      ['quote_storage', 'none'], ['store_file', 'storage'], ['get_receipt', 'none'], ['verify_upload', 'none'], ['list_models', 'none'], ['chat', 'cost'],
    ])
    const text = JSON.stringify(catalog.map(({ inputSchema, outputSchema }) => ({ inputSchema, outputSchema })))
    expect(text).not.toMatch(/"\$ref"|"x-designed"|"examples?":/)
    for (const tool of catalog) {
      expect(tool.inputSchema.type).toBe('object')
      expect(tool.outputSchema.type).toBe('object')
    }
  })

  it('takes the schemas from the document: a change there is a change of the tool', () => {
    const changed = structuredClone(document) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } }
    changed.components.schemas.McpReceiptArgs!.properties.extra = { type: 'string' }
    const tool = loadMcpToolCatalog(changed as unknown as Record<string, unknown>).find((t) => t.name === 'get_receipt')!
    expect(Object.keys(tool.inputSchema.properties as object)).toEqual(['ar_tx_id', 'extra'])
  })

  it('paid tools may answer their result, the x402 requirement or the Error body; every tool may answer Error', () => {
    const store = catalog.find((t) => t.name === 'store_file')!
    const anyOf = store.outputSchema.anyOf as { required?: string[] }[]
    expect(anyOf.map((s) => s.required)).toEqual([['upload_id', 'status', 'settlement', 'links'], ['x402Version', 'accepts', 'error'], ['error', 'message']])
    expect((catalog.find((t) => t.name === 'list_models')!.outputSchema.anyOf as unknown[]).length).toBe(2)
  })

  it('checks arguments against the tool\'s input schema', () => {
    const quote = catalog.find((t) => t.name === 'quote_storage')!
    expect(quote.checkArguments({ bytes: 10 })).toBeUndefined()
    expect(quote.checkArguments({ bytes: 0 })).toMatch(/bytes/)
    expect(quote.checkArguments({ upload_id: 'x' })).toMatch(/required|additional/)
    const store = catalog.find((t) => t.name === 'store_file')!
    expect(store.checkArguments({ data_base64: 'aGk=', url: 'https://a.example/x' })).toBeDefined()
  })

  it('refuses a document without x-mcp-tools, or with a $ref that does not resolve', () => {
    expect(() => loadMcpToolCatalog({ paths: {} })).toThrow(/x-mcp-tools/)
    const broken = structuredClone(document) as { paths: Record<string, { post: { 'x-mcp-tools': { input: unknown }[] } }> }
    broken.paths['/mcp']!.post['x-mcp-tools'][0]!.input = { $ref: '#/components/schemas/Nope' }
    expect(() => loadMcpToolCatalog(broken as unknown as Record<string, unknown>)).toThrow(/does not resolve/)
  })
})
