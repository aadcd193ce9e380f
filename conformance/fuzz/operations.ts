/**
 * Every operation of both OpenAPI documents, dereferenced, as the fuzzer needs it: method, path template,
 * parameters (path, query, header; cookie ones are the session credential), request body media types and
 * schemas, security requirement, documented statuses. Read from the documents on every run, so a route added
 * to `openapi/` is fuzzed without touching the fuzzer.
 */
import SwaggerParser from '@apidevtools/swagger-parser'
import { documentPaths } from '../DocumentClient.js'
import type { Server } from '../types.js'
import type { Schema } from './schemaArbitrary.js'
import { loadOpenApiDocument } from '../../src/shared/http/index.js'

export type Parameter = { name: string; in: 'path' | 'query' | 'header' | 'cookie'; required: boolean; schema: Schema }
export type Operation = {
  server: Server
  id: string
  method: string
  path: string
  parameters: Parameter[]
  /** Media type → schema; empty when the operation takes no body. */
  body: Map<string, Schema>
  bodyRequired: boolean
  /** Alternatives of credentials (`[]` in the list = public). */
  security: string[][]
  statuses: string[]
  /** Links of each documented status (`responses.<status>.links`), by link name. */
  links: Map<string, Map<string, LinkObject>>
  /** `x-mcp-tools` (the MCP endpoint's tools, with their input and output schemas). */
  mcpTools?: McpToolDoc[]
  /** `x-loopback-without-credentials`: a client on the server's machine needs no credential (`/metrics`). */
  loopbackWithoutCredentials?: boolean
}

/** An OpenAPI Link Object as the fuzzer follows it (runtime expressions in `parameters` and `requestBody`). */
export type LinkObject = { operationId?: string; operationRef?: string; parameters?: Record<string, unknown>; requestBody?: unknown; description?: string; 'x-use-after-free'?: boolean }
export type McpToolDoc = { name: string; payment?: string; input: Schema; outputs: Schema[] }

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const

export async function loadOperations(server: Server): Promise<Operation[]> {
  const document = (await SwaggerParser.dereference(structuredClone(loadOpenApiDocument(documentPaths[server])) as never)) as unknown as {
    paths: Record<string, Record<string, unknown>>
    security?: Record<string, unknown>[]
  }
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    const shared = (item.parameters as Parameter[] | undefined) ?? []
    for (const method of METHODS) {
      const op = item[method] as
        | {
            operationId?: string
            parameters?: Parameter[]
            requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }
            security?: Record<string, unknown>[]
            responses?: Record<string, { links?: Record<string, LinkObject> }>
            'x-mcp-tools'?: McpToolDoc[]
            'x-loopback-without-credentials'?: boolean
          }
        | undefined
      if (!op) continue
      const byKey = new Map<string, Parameter>()
      for (const p of [...shared, ...(op.parameters ?? [])]) byKey.set(`${p.in}:${p.name}`, { ...p, required: Boolean(p.required) || p.in === 'path', schema: p.schema ?? {} })
      const security = (op.security ?? document.security ?? []).map((alt) => Object.keys(alt))
      operations.push({
        server,
        id: op.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters: [...byKey.values()],
        body: new Map(Object.entries(op.requestBody?.content ?? {}).map(([type, media]) => [type, media.schema ?? {}])),
        bodyRequired: Boolean(op.requestBody?.required),
        security,
        statuses: Object.keys(op.responses ?? {}),
        links: new Map(Object.entries(op.responses ?? {}).filter(([, r]) => r?.links).map(([status, r]) => [status, new Map(Object.entries(r.links!))])),
        ...(op['x-mcp-tools'] ? { mcpTools: op['x-mcp-tools'] } : {}),
        ...(op['x-loopback-without-credentials'] === true ? { loopbackWithoutCredentials: true } : {}),
      })
    }
  }
  return operations
}
