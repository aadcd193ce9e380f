/**
 * The JSON Schema keywords of a request schema, by location (`body:application/json/properties/model/minLength`),
 * and which of them a value exercised: a keyword counts as exercised when a value reached the schema node that
 * holds it (a property present, an array element, the branch of a `oneOf`/`anyOf` whose type the value has).
 * The negative side — keywords a request broke — comes from the validator's errors (judgeRequest.ts).
 */
const VALIDATION = new Set([
  'type', 'enum', 'const', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength',
  'pattern', 'format', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'required', 'additionalProperties',
  'oneOf', 'anyOf', 'allOf', 'not', 'contains', 'propertyNames', 'dependentRequired',
])

type Schema = Record<string, unknown>
const isSchema = (s: unknown): s is Schema => Boolean(s) && typeof s === 'object' && !Array.isArray(s)

/** Every validation keyword of `schema`, as `<at>/<path to it>` (bounded depth: recursive schemas stop). */
export function keywordLocations(schema: unknown, at: string, depth = 0, out: string[] = []): string[] {
  if (!isSchema(schema) || depth > 8) return out
  for (const [keyword, value] of Object.entries(schema)) {
    if (VALIDATION.has(keyword) && !(keyword === 'additionalProperties' && value !== false)) out.push(`${at}/${keyword}`)
  }
  for (const [name, sub] of Object.entries(isSchema(schema.properties) ? schema.properties : {})) keywordLocations(sub, `${at}/properties/${name}`, depth + 1, out)
  if (isSchema(schema.items)) keywordLocations(schema.items, `${at}/items`, depth + 1, out)
  if (isSchema(schema.additionalProperties)) keywordLocations(schema.additionalProperties, `${at}/additionalProperties`, depth + 1, out)
  for (const keyword of ['oneOf', 'anyOf', 'allOf', 'prefixItems'] as const) {
    const list = schema[keyword]
    if (Array.isArray(list)) list.forEach((sub, i) => keywordLocations(sub, `${at}/${keyword}/${i}`, depth + 1, out))
  }
  return out
}

function jsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function typeFits(schema: Schema, value: unknown): boolean {
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? undefined : [schema.type]
  if (!types) return schema.const === undefined || schema.const === value
  const t = jsonType(value)
  return types.includes(t) || (t === 'integer' && types.includes('number'))
}

/** The keywords `value` exercised in `schema` (locations as keywordLocations writes them). */
export function exercisedKeywords(schema: unknown, value: unknown, at: string, depth = 0, out = new Set<string>()): Set<string> {
  if (!isSchema(schema) || value === undefined || depth > 8) return out
  for (const [keyword, kv] of Object.entries(schema)) {
    if (VALIDATION.has(keyword) && !(keyword === 'additionalProperties' && kv !== false)) out.add(`${at}/${keyword}`)
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>
    const properties = isSchema(schema.properties) ? schema.properties : {}
    for (const [name, sub] of Object.entries(properties)) if (Object.hasOwn(record, name)) exercisedKeywords(sub, record[name], `${at}/properties/${name}`, depth + 1, out)
    if (isSchema(schema.additionalProperties)) {
      for (const [name, v] of Object.entries(record)) if (!Object.hasOwn(properties, name)) exercisedKeywords(schema.additionalProperties, v, `${at}/additionalProperties`, depth + 1, out)
    }
  }
  if (Array.isArray(value) && isSchema(schema.items)) for (const v of value) exercisedKeywords(schema.items, v, `${at}/items`, depth + 1, out)
  if (Array.isArray(schema.allOf)) schema.allOf.forEach((sub, i) => exercisedKeywords(sub, value, `${at}/allOf/${i}`, depth + 1, out))
  for (const keyword of ['oneOf', 'anyOf'] as const) {
    const list = schema[keyword]
    if (Array.isArray(list)) list.forEach((sub, i) => isSchema(sub) && typeFits(sub, value) && exercisedKeywords(sub, value, `${at}/${keyword}/${i}`, depth + 1, out))
  }
  return out
}
