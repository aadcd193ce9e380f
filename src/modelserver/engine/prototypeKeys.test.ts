import { describe, expect, it } from 'vitest'
import { toGrammarSchema } from './jsonSchema.js'
import { flattenMetadata } from './modelInfo.js'

/** Keys from a file or a request are data: `__proto__` and friends become own entries, never a prototype. */
describe('user-supplied keys never index plain objects', () => {
  it('flattenMetadata: prototype member names (at any depth) are own keys of a prototype-less result', () => {
    const nested = JSON.parse('{"__proto__":[1,2],"constructor":"c","svc":{"toString":7,"__proto__":{"x":true}}}')
    const flat = flattenMetadata(nested)
    expect(Object.getPrototypeOf(flat)).toBeNull()
    expect(Object.keys(flat).sort()).toEqual(['__proto__', 'constructor', 'svc.__proto__.x', 'svc.toString'])
    expect(Object.getOwnPropertyDescriptor(flat, '__proto__')?.value).toEqual([1, 2])
    expect(flat.constructor).toBe('c')
    // an absent key is absent: no inherited `toString`, `hasOwnProperty`, `valueOf`
    expect(flat.toString).toBeUndefined()
    expect(flat.hasOwnProperty).toBeUndefined()
    expect(JSON.parse(JSON.stringify(flat))).toEqual(JSON.parse('{"__proto__":[1,2],"constructor":"c","svc.toString":7,"svc.__proto__.x":true}'))
  })

  it('toGrammarSchema: property and $defs names that are prototype members stay property names; the bound still applies', () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"string","title":"dropped"}},"$defs":{"__proto__":{"type":"string"}},"required":["__proto__"]}')
    const out = toGrammarSchema(schema, 8) as unknown as Record<string, any>
    expect(Object.getPrototypeOf(out.properties)).toBeNull()
    expect(Object.getPrototypeOf(out.$defs)).toBeNull()
    expect(Object.keys(out.properties)).toEqual(['__proto__', 'constructor'])
    expect(Object.getOwnPropertyDescriptor(out.properties, '__proto__')?.value).toMatchObject({ type: 'string', maxLength: 8 })
    expect(out.properties.constructor).toEqual(Object.assign(Object.create(null), { type: 'string', maxLength: 8 }))
    expect(Object.keys(out.$defs)).toEqual(['__proto__'])
    expect(out.required).toEqual(['__proto__'])
    // a schema that is itself named like prototype members: no inherited `type`, `enum` or `maxLength` read
    expect(toGrammarSchema(JSON.parse('{"constructor":{}}'), 4)).not.toHaveProperty('maxLength')
  })
})
