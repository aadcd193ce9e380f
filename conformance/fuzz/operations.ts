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
}

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
        | { operationId?: string; parameters?: Parameter[]; requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }; security?: Record<string, unknown>[]; responses?: Record<string, unknown> }
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
      })
    }
  }
  return operations
}
