import type { GbnfJsonSchema } from 'node-llama-cpp'

/**
 * A JSON schema (`format`, or a tool's `parameters`) that no grammar can honour: an empty `enum`/`anyOf`, a `false`
 * schema, an unknown type, a reference outside the schema. `path` is a JSON pointer into the schema.
 */
export class SchemaRefusal extends Error {
  override name = 'SchemaRefusal'
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path || '/'}: ${reason}`)
  }
}

/**
 * Turns an Ollama/OpenAI JSON schema into the subset node-llama-cpp's grammar builds (its `GbnfJsonSchema`), so that
 * every schema a client may send either becomes a grammar or is refused with where and why — never a schema the
 * grammar misreads (a node without a type became `null`; a typeless property made the call's validation throw).
 *
 * Enforced: `type` (one or a list), `enum`, `const`, `anyOf`/`oneOf`, `allOf` of one schema or of objects (merged),
 * `properties`, `required`, `additionalProperties`, `min/maxProperties`, `items`, `prefixItems`, `min/maxItems`,
 * `min/maxLength`, `format` `date-time`/`date`/`time`, `$ref` into `$defs` (or `definitions`). A schema without a
 * type is any JSON value. Every other keyword (`minimum`, `maximum`, `pattern`, other formats, `not`...) is accepted
 * and not enforced — as documented in the model server's `Format` schema. When `maxStringLength` is given (the tiny
 * models' nudge, read from their GGUF metadata), free strings are bounded so a random model cannot loop inside one.
 */
export function toGrammarSchema(schema: unknown, maxStringLength?: number): GbnfJsonSchema {
  return convert(schema, '', { maxLen: maxStringLength, defs: new Map() }) as GbnfJsonSchema
}

/** The schema of a tool's `parameters`: an object schema (absent or `{}`: an object of any members). */
export function toToolParametersSchema(parameters: unknown, maxStringLength?: number): GbnfJsonSchema {
  // `{}` or `{properties: …}` without a type: an object, as OpenAI reads a function's parameters
  const untyped = isRecord(parameters) && !['type', 'anyOf', 'oneOf', 'allOf', '$ref', 'enum', 'const'].some((k) => Object.hasOwn(parameters, k))
  const schema = toGrammarSchema(untyped ? { ...parameters, type: 'object' } : (parameters ?? { type: 'object' }), maxStringLength) as unknown as Record<string, unknown>
  const objectLike = schema.type === 'object' || (Array.isArray(schema.oneOf) && schema.oneOf.every((s) => isRecord(s) && s.type === 'object'))
  if (!objectLike) throw new SchemaRefusal('', 'a tool\'s parameters must be a schema of type "object"')
  return schema as unknown as GbnfJsonSchema
}

type Context = { maxLen: number | undefined; defs: Map<string, unknown> }

const IMMUTABLE = new Set(['string', 'number', 'integer', 'boolean', 'null'])
const TYPES = new Set([...IMMUTABLE, 'object', 'array'])
const FORMATS = new Set(['date-time', 'date', 'time'])
const COMBINED = ['allOf', 'anyOf', 'oneOf', 'enum', 'const', '$ref', 'type', 'properties', 'items', 'prefixItems'] as const

/** Any JSON value, in the grammar's terms. */
function anyValue(): Record<string, unknown> {
  return {
    oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }],
  }
}

/**
 * A node with definitions of its own (`$defs` or `definitions`, at any level) converts them once and carries them as
 * `$defs`, where node-llama-cpp scopes them for the references below it.
 */
function convert(node: unknown, path: string, outer: Context): Record<string, unknown> {
  const own = definitionsOf(node)
  if (own.size === 0) return convertNode(node, path, outer)
  const ctx = { ...outer, defs: new Map([...outer.defs, ...own]) }
  const out = convertNode(node, path, ctx)
  const converted = dictionary()
  for (const [name, def] of own) define(converted, name, convertNode(def, `${path}/$defs/${escapePointer(name)}`, ctx))
  return { ...out, $defs: converted }
}

function convertNode(node: unknown, path: string, ctx: Context): Record<string, unknown> {
  if (node === true) return anyValue()
  if (node === false) throw new SchemaRefusal(path, 'the schema `false` matches nothing')
  if (!isRecord(node)) throw new SchemaRefusal(path, 'a schema must be an object')
  const description = typeof node.description === 'string' ? { description: node.description } : {}
  const out = (schema: Record<string, unknown>) => withDescription(schema, description)
  const has = (key: string) => Object.hasOwn(node, key)

  if (has('allOf')) return convertNode(mergeAllOf(node, path), path, ctx)
  if (has('$ref')) return out({ $ref: refOf(node.$ref, path, ctx) })
  if (has('const')) return out({ const: literal(node.const, `${path}/const`) })
  if (has('enum')) {
    if (!Array.isArray(node.enum) || node.enum.length === 0) throw new SchemaRefusal(`${path}/enum`, 'enum must list at least one value')
    return out({ enum: node.enum.map((v, i) => literal(v, `${path}/enum/${i}`)) })
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    if (!has(key)) continue
    const options = node[key]
    if (!Array.isArray(options) || options.length === 0) throw new SchemaRefusal(`${path}/${key}`, `${key} must list at least one schema`)
    return out({ oneOf: options.map((o, i) => convert(o, `${path}/${key}/${i}`, ctx)) })
  }
  const type = node.type ?? (has('properties') || has('additionalProperties') ? 'object' : has('items') || has('prefixItems') ? 'array' : undefined)
  if (type === undefined) return out(anyValue())
  if (Array.isArray(type)) {
    if (type.length === 0) throw new SchemaRefusal(`${path}/type`, 'type must name at least one type')
    type.forEach((t, i) => assertType(t, `${path}/type/${i}`))
    if (type.every((t) => IMMUTABLE.has(t as string))) return out({ type })
    return out({ oneOf: type.map((t) => convertNode({ ...node, type: t }, path, ctx)) })
  }
  assertType(type, `${path}/type`)
  switch (type) {
    case 'string':
      return out(stringSchema(node, ctx))
    case 'object':
      return out(objectSchema(node, path, ctx))
    case 'array':
      return out(arraySchema(node, path, ctx))
    default:
      return out({ type })
  }
}

function stringSchema(node: Record<string, unknown>, ctx: Context): Record<string, unknown> {
  if (typeof node.format === 'string' && FORMATS.has(node.format)) return { type: 'string', format: node.format }
  const schema: Record<string, unknown> = { type: 'string' }
  const min = wholeNumber(node.minLength)
  let max = wholeNumber(node.maxLength)
  if (ctx.maxLen !== undefined) max = Math.min(max ?? Infinity, ctx.maxLen)
  if (min !== undefined) schema.minLength = max !== undefined ? Math.min(min, max) : min
  if (max !== undefined) schema.maxLength = max
  return schema
}

function objectSchema(node: Record<string, unknown>, path: string, ctx: Context): Record<string, unknown> {
  const schema: Record<string, unknown> = { type: 'object' }
  const properties = isRecord(node.properties) ? node.properties : undefined
  if (properties) {
    const converted = dictionary()
    for (const [name, value] of Object.entries(properties)) define(converted, name, convert(value, `${path}/properties/${escapePointer(name)}`, ctx))
    schema.properties = converted
    if (Array.isArray(node.required)) schema.required = node.required.filter((r): r is string => typeof r === 'string' && Object.hasOwn(properties, r))
  }
  const extra = node.additionalProperties
  // Without members named, an object is any object; with them, only those (what a grammar should let a model write).
  if (extra === undefined) schema.additionalProperties = !properties || Object.keys(properties).length === 0
  else schema.additionalProperties = typeof extra === 'boolean' ? extra : convert(extra, `${path}/additionalProperties`, ctx)
  const minProperties = wholeNumber(node.minProperties)
  const maxProperties = wholeNumber(node.maxProperties)
  if (minProperties !== undefined) schema.minProperties = minProperties
  if (maxProperties !== undefined) schema.maxProperties = maxProperties
  return schema
}

function arraySchema(node: Record<string, unknown>, path: string, ctx: Context): Record<string, unknown> {
  const schema: Record<string, unknown> = { type: 'array' }
  if (node.items !== undefined && node.items !== true) schema.items = convert(node.items, `${path}/items`, ctx)
  if (Array.isArray(node.prefixItems)) schema.prefixItems = node.prefixItems.map((p, i) => convert(p, `${path}/prefixItems/${i}`, ctx))
  const minItems = wholeNumber(node.minItems)
  const maxItems = wholeNumber(node.maxItems)
  if (minItems !== undefined) schema.minItems = minItems
  if (maxItems !== undefined) schema.maxItems = maxItems
  return schema
}

/** `allOf` of one schema is that schema; of several objects, one object with all their members. */
function mergeAllOf(node: Record<string, unknown>, path: string): Record<string, unknown> {
  const parts = node.allOf
  if (!Array.isArray(parts) || parts.length === 0) throw new SchemaRefusal(`${path}/allOf`, 'allOf must list at least one schema')
  const { allOf: _allOf, ...siblings } = node
  if (parts.length === 1) {
    if (!isRecord(parts[0])) throw new SchemaRefusal(`${path}/allOf/0`, 'a schema must be an object')
    return { ...siblings, ...parts[0] }
  }
  const properties = dictionary()
  const required = new Set<string>()
  let additionalProperties: unknown = siblings.additionalProperties
  for (const [i, part] of parts.entries()) {
    const isObject = isRecord(part) && (part.type === 'object' || (part.type === undefined && isRecord(part.properties)))
    if (!isObject || COMBINED.some((k) => k !== 'type' && k !== 'properties' && Object.hasOwn(part, k))) {
      throw new SchemaRefusal(`${path}/allOf/${i}`, 'allOf of several schemas is supported for object schemas with properties')
    }
    for (const [name, value] of Object.entries(isRecord(part.properties) ? part.properties : {})) define(properties, name, value)
    if (Array.isArray(part.required)) for (const r of part.required) if (typeof r === 'string') required.add(r)
    if (part.additionalProperties === false) additionalProperties = false
  }
  return { ...siblings, type: 'object', properties, required: [...required], ...(additionalProperties === undefined ? {} : { additionalProperties }) }
}

function refOf(ref: unknown, path: string, ctx: Context): string {
  const match = typeof ref === 'string' ? /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref) : null
  const name = match ? unescapePointer(match[1]!) : undefined
  if (name === undefined || !ctx.defs.has(name)) throw new SchemaRefusal(`${path}/$ref`, 'a $ref must name an entry of the schema\'s own $defs (or definitions)')
  return `#/$defs/${name}`
}

/** A node's own `$defs` and `definitions`, by name (user-supplied names: a Map, never an object's keys). */
function definitionsOf(schema: unknown): Map<string, unknown> {
  const defs = new Map<string, unknown>()
  if (!isRecord(schema)) return defs
  for (const key of ['definitions', '$defs']) {
    const table = schema[key]
    if (isRecord(table)) for (const [name, value] of Object.entries(table)) defs.set(name, value)
  }
  return defs
}

function literal(value: unknown, path: string): string | number | boolean | null {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value
  throw new SchemaRefusal(path, 'enum and const values must be strings, numbers, booleans or null')
}

function assertType(type: unknown, path: string): void {
  if (typeof type !== 'string' || !TYPES.has(type)) throw new SchemaRefusal(path, `unknown type ${JSON.stringify(type)}; expected one of ${[...TYPES].join(', ')}`)
}

function wholeNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

function withDescription(schema: Record<string, unknown>, description: { description?: string }): Record<string, unknown> {
  return description.description === undefined ? schema : { ...schema, ...description }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function escapePointer(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1')
}

function unescapePointer(name: string): string {
  return name.replaceAll('~1', '/').replaceAll('~0', '~')
}

/**
 * Property and `$defs` names are user-supplied: the maps that hold them have no prototype and every key is defined
 * as an own data property (`__proto__` as a property name stays a property name).
 */
function dictionary(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}
