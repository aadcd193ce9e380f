/**
 * Local `$ref`s (`#/components/schemas/X`) inside an OpenAPI document read as a plain object: the gateway's MCP
 * tool catalogue and the model server's error shapes and null handling all read the document this way.
 */
type Json = Record<string, unknown>

/** The value as an object (not an array, not null); undefined otherwise. */
export const objectAt = (value: unknown): Json | undefined => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined)

/** What a local JSON pointer (`#/a/b~1c`) names in `document`; undefined when it names nothing or is not local. */
export function pointerTarget(document: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined
  let node: unknown = document
  for (const part of ref.slice(2).split('/')) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~')
    const object = objectAt(node)
    if (!object || !Object.hasOwn(object, key)) return undefined
    node = object[key]
  }
  return node
}

/** The object `node` is, after following its `$ref`s (a chain of refs, bounded; one that loops names nothing). */
export function followLocalRefs(document: Json, node: unknown): Json | undefined {
  let current = objectAt(node)
  for (let hops = 0; current && typeof current.$ref === 'string'; hops++) {
    if (hops === 32) return undefined
    current = objectAt(pointerTarget(document, current.$ref))
  }
  return current
}
