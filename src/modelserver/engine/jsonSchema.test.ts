import { describe, expect, it } from 'vitest'
import { SchemaRefusal, toGrammarSchema, toToolParametersSchema } from './jsonSchema.js'

/** What node-llama-cpp's grammar builds from: plain data (the converter's maps have no prototype). */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema)) as unknown
const anyValue = { oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'object', additionalProperties: true }, { type: 'array' }] }

describe('toGrammarSchema: a client schema in the grammar builder’s terms', () => {
  it('a node without a type is any JSON value (it became the grammar of `null`)', () => {
    expect(plain(toGrammarSchema({ description: 'x' }))).toEqual({ ...anyValue, description: 'x' })
    expect(plain(toGrammarSchema(true))).toEqual(anyValue)
  })

  it('anyOf is oneOf; allOf of one schema is that schema; allOf of objects merges members and required', () => {
    expect(plain(toGrammarSchema({ anyOf: [{ type: 'integer' }, { type: 'null' }], title: 'N', default: null }))).toEqual({ oneOf: [{ type: 'integer' }, { type: 'null' }] })
    expect(plain(toGrammarSchema({ allOf: [{ type: 'string', maxLength: 3 }] }))).toEqual({ type: 'string', maxLength: 3 })
    expect(
      plain(toGrammarSchema({ allOf: [{ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }, { properties: { b: { type: 'string' } }, required: ['b'], additionalProperties: false }] })),
    ).toEqual({ type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string' } }, required: ['a', 'b'], additionalProperties: false })
  })

  it('a list of types with object or array becomes one alternative per type', () => {
    expect(plain(toGrammarSchema({ type: ['object', 'null'], properties: { k: { type: 'boolean' } } }))).toEqual({
      oneOf: [{ type: 'object', properties: { k: { type: 'boolean' } }, additionalProperties: false }, { type: 'null' }],
    })
    expect(plain(toGrammarSchema({ type: ['string', 'null'] }))).toEqual({ type: ['string', 'null'] })
  })

  it('objects: named members only unless said otherwise; without members, any object; required only names members', () => {
    expect(plain(toGrammarSchema({ type: 'object', properties: { a: { type: 'string' } }, required: ['a', 'ghost'] }))).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
      additionalProperties: false,
    })
    expect(plain(toGrammarSchema({ type: 'object' }))).toEqual({ type: 'object', additionalProperties: true })
    expect(plain(toGrammarSchema({ type: 'object', properties: {}, additionalProperties: { type: 'integer' } }))).toEqual({ type: 'object', properties: {}, additionalProperties: { type: 'integer' } })
  })

  it('$defs and definitions at any level become scoped $defs; references into either resolve', () => {
    const out = plain(
      toGrammarSchema({
        type: 'object',
        properties: { a: { $ref: '#/definitions/A' }, b: { type: 'object', properties: { c: { $ref: '#/$defs/C' } }, $defs: { C: { type: 'integer' } } } },
        definitions: { A: { type: 'string' } },
      }),
    ) as Record<string, any>
    expect(out.properties.a).toEqual({ $ref: '#/$defs/A' })
    expect(out.$defs).toEqual({ A: { type: 'string' } })
    expect(out.properties.b.$defs).toEqual({ C: { type: 'integer' } })
    expect(out.properties.b.properties.c).toEqual({ $ref: '#/$defs/C' })
  })

  it('strings keep their length bounds and the three formats the grammar knows; the nudge bounds free strings', () => {
    expect(plain(toGrammarSchema({ type: 'string', format: 'date-time' }))).toEqual({ type: 'string', format: 'date-time' })
    expect(plain(toGrammarSchema({ type: 'string', format: 'email', pattern: '^a', minLength: 2 }))).toEqual({ type: 'string', minLength: 2 })
    expect(plain(toGrammarSchema({ type: 'string', minLength: 20, maxLength: 40 }, 8))).toEqual({ type: 'string', minLength: 8, maxLength: 8 })
    expect(plain(toGrammarSchema({ enum: ['a', 'b'] }, 8))).toEqual({ enum: ['a', 'b'] })
  })

  it('refuses, with a JSON pointer to the place, what no grammar can honour', () => {
    const refusal = (schema: unknown) => {
      try {
        toGrammarSchema(schema)
      } catch (error) {
        expect(error).toBeInstanceOf(SchemaRefusal)
        return (error as Error).message
      }
      return 'accepted'
    }
    expect(refusal({ enum: [] })).toBe('/enum: enum must list at least one value')
    expect(refusal({ type: 'object', properties: { 'a/b': { oneOf: [] } } })).toBe('/properties/a~1b/oneOf: oneOf must list at least one schema')
    expect(refusal({ items: { type: 'float' } })).toBe('/items/type: unknown type "float"; expected one of string, number, integer, boolean, null, object, array')
    expect(refusal({ type: [] })).toBe('/type: type must name at least one type')
    expect(refusal({ const: { a: 1 } })).toBe('/const: enum and const values must be strings, numbers, booleans or null')
    expect(refusal({ $ref: 'https://example.com/schema' })).toMatch(/^\/\$ref: a \$ref must name an entry/)
    expect(refusal({ allOf: [{ type: 'string' }, { type: 'object' }] })).toBe('/allOf/0: allOf of several schemas is supported for object schemas with properties')
    expect(refusal(false)).toBe('/: the schema `false` matches nothing')
    expect(refusal('string')).toBe('/: a schema must be an object')
  })
})

describe('toToolParametersSchema', () => {
  it('absent, {} or members without a type: an object; any other type is refused', () => {
    expect(plain(toToolParametersSchema(undefined))).toEqual({ type: 'object', additionalProperties: true })
    expect(plain(toToolParametersSchema({}))).toEqual({ type: 'object', additionalProperties: true })
    expect(plain(toToolParametersSchema({ properties: { q: { type: 'string' } } }))).toEqual({ type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false })
    expect(() => toToolParametersSchema({ type: 'string' })).toThrow(`/: a tool's parameters must be a schema of type "object"`)
    expect(() => toToolParametersSchema({ anyOf: [{ type: 'object' }, { type: 'null' }] })).toThrow(SchemaRefusal)
  })
})
