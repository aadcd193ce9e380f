/**
 * JSON Schema (2020-12, as OpenAPI 3.1 uses it) → a fast-check arbitrary of VALID values: `const`, `enum`,
 * `oneOf`/`anyOf` (one branch), `allOf` (merged), type unions, integer/number bounds (boundary values are
 * drawn often), string `format` (date-time, uri, email, uuid), `pattern` (fast-check's `stringMatching`),
 * lengths, arrays, objects (required always, optional sometimes), documented `examples`. Depth is bounded
 * (recursive schemas). Mutations into invalid values are requestArbitrary.ts's job.
 */
import fc from 'fast-check'

export type Schema = Record<string, unknown>

const MAX_DEPTH = 4
const MAX_STRING = 48

function merged(all: Schema[]): Schema {
  const out: Schema = {}
  const properties: Record<string, unknown> = {}
  const required = new Set<string>()
  for (const s of all) {
    for (const [k, v] of Object.entries(s)) if (k !== 'properties' && k !== 'required' && k !== 'allOf') out[k] = v
    Object.assign(properties, (s.properties as Record<string, unknown>) ?? {})
    for (const r of (s.required as string[]) ?? []) required.add(r)
    if (Array.isArray(s.allOf)) Object.assign(out, merged(s.allOf as Schema[]))
  }
  if (Object.keys(properties).length) out.properties = { ...((out.properties as object) ?? {}), ...properties }
  if (required.size) out.required = [...required]
  return out
}

function boundedInteger(schema: Schema): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1 : undefined
  const max = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1 : undefined
  const lo = Math.ceil(Math.max(min ?? -1_000_000, Number.MIN_SAFE_INTEGER))
  const hi = Math.floor(Math.min(max ?? 1_000_000, Number.MAX_SAFE_INTEGER))
  if (lo > hi) return fc.constant(lo)
  const boundaries = [lo, hi, ...(lo <= 0 && hi >= 0 ? [0] : []), ...(lo <= 1 && hi >= 1 ? [1] : [])]
  return fc.oneof({ arbitrary: fc.integer({ min: lo, max: hi }), weight: 3 }, { arbitrary: fc.constantFrom(...boundaries), weight: 1 })
}

function boundedNumber(schema: Schema): fc.Arbitrary<number> {
  const min = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + 1e-6 : -1e6
  const max = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - 1e-6 : 1e6
  return fc.oneof(fc.double({ min, max, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(min, max))
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0
  const maxLength = Math.max(minLength, Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : MAX_STRING, MAX_STRING))
  switch (schema.format) {
    case 'date-time':
      return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString())
    case 'uri':
    case 'url':
      return fc.webUrl()
    case 'email':
      return fc.emailAddress()
    case 'uuid':
      return fc.uuid()
  }
  if (typeof schema.pattern === 'string') {
    const pattern = compilePattern(schema.pattern)
    if (pattern) {
      const upper = Math.max(maxLength, typeof schema.maxLength === 'number' ? schema.maxLength : 4096)
      const fits = (s: string) => s.length >= minLength && s.length <= upper
      // stringMatching repeats `+` and `*` only a few times at its default size, so a minLength that needs many
      // repetitions (`^0x([0-9a-f]{2})+$` with minLength 132) would make `.filter` retry forever and block the
      // event loop — the run's time bound included. Take the smallest size whose probe fits often enough; with
      // none, plain strings below (an invalid value, which the server must answer with a documented 4xx).
      for (const size of ['small', 'medium', 'large'] as const) {
        const matching = fc.stringMatching(pattern, { size })
        if (fc.sample(matching, { numRuns: 20, seed: 1 }).filter(fits).length >= 4) return matching.filter(fits)
      }
    }
  }
  const unit: fc.Arbitrary<string> = fc.oneof({ arbitrary: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_:. '), weight: 4 }, { arbitrary: fc.string({ minLength: 1, maxLength: 1, unit: 'binary' }), weight: 1 })
  return fc.string({ minLength, maxLength, unit })
}

export function schemaArbitrary(schema: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object') return fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null))
  const s = schema as Schema
  if (Object.hasOwn(s, 'const')) return fc.constant(s.const)
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...s.enum)
  const examples = Array.isArray(s.examples) ? s.examples : Object.hasOwn(s, 'example') ? [s.example] : []
  const generated = generatedArbitrary(s, depth)
  return examples.length ? fc.oneof({ arbitrary: fc.constantFrom(...examples), weight: 1 }, { arbitrary: generated, weight: 3 }) : generated
}

function generatedArbitrary(s: Schema, depth: number): fc.Arbitrary<unknown> {
  if (Array.isArray(s.allOf)) return schemaArbitrary(merged([{ ...s, allOf: undefined }, ...(s.allOf as Schema[])]), depth)
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined
  if (Array.isArray(branches) && branches.length) {
    const base = { ...s, oneOf: undefined, anyOf: undefined }
    return fc.oneof(...branches.map((b) => schemaArbitrary(merged([base, b]), depth + 1)))
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : s.properties ? ['object'] : s.items ? ['array'] : []
  if (types.length === 0) return fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: -10, max: 10 }), fc.boolean())
  return fc.oneof(...types.map((t) => typed(t, s, depth)))
}

function typed(type: string, s: Schema, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null)
    case 'boolean':
      return fc.boolean()
    case 'integer':
      return boundedInteger(s)
    case 'number':
      return boundedNumber(s)
    case 'string':
      return stringArbitrary(s)
    case 'array': {
      if (depth >= MAX_DEPTH) return fc.constant([])
      const minLength = typeof s.minItems === 'number' ? s.minItems : 0
      const maxLength = Math.max(minLength, Math.min(typeof s.maxItems === 'number' ? s.maxItems : 3, 3))
      return fc.array(schemaArbitrary(s.items, depth + 1), { minLength, maxLength })
    }
    case 'object': {
      const properties = (s.properties ?? {}) as Record<string, unknown>
      const required = new Set(((s.required as string[]) ?? []).filter((r) => Object.hasOwn(properties, r)))
      if (depth >= MAX_DEPTH) return fc.constant({})
      const model: Record<string, fc.Arbitrary<unknown>> = Object.create(null)
      for (const [name, sub] of Object.entries(properties)) model[name] = schemaArbitrary(sub, depth + 1)
      return fc.record(model, { requiredKeys: [...required] }).map((o) => ({ ...o }))
    }
    default:
      return fc.constant(null)
  }
}

/** The document's pattern as a JavaScript RegExp, or undefined for one JavaScript cannot compile. */
function compilePattern(source: string): RegExp | undefined {
  try {
    return new RegExp(source, 'u')
  } catch {
    return undefined
  }
}
