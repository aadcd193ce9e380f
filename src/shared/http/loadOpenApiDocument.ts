import { readFileSync } from 'node:fs'
import { parse } from 'yaml'

/** Reads an OpenAPI document (YAML or JSON) into a plain object. `$ref`s are resolved by the router. */
export function loadOpenApiDocument(path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8')
  const document = path.endsWith('.json') ? JSON.parse(text) : parse(text, { maxAliasCount: -1 })
  if (!document || typeof document !== 'object') throw new Error(`${path} is not an OpenAPI document`)
  return document as Record<string, unknown>
}
