import { describe, expect, it } from 'vitest'
import { followLocalRefs, pointerTarget } from './localRefs.js'

const document = {
  paths: { '/a/{b}': { get: { $ref: '#/components/x' } } },
  components: { x: { $ref: '#/components/y' }, y: { type: 'object' }, loop: { $ref: '#/components/loop' } },
}

describe('local $refs of an OpenAPI document', () => {
  it('a pointer reads escaped segments; one that names nothing, is not local or walks the prototype is undefined', () => {
    expect(pointerTarget(document, '#/paths/~1a~1{b}/get')).toEqual({ $ref: '#/components/x' })
    expect(pointerTarget(document, '#/components/z')).toBeUndefined()
    expect(pointerTarget(document, 'other.yaml#/components/y')).toBeUndefined()
    expect(pointerTarget(document, '#/components/__proto__')).toBeUndefined()
  })

  it('a chain of refs is followed to its object; a ref that loops names nothing', () => {
    expect(followLocalRefs(document, { $ref: '#/components/x' })).toEqual({ type: 'object' })
    expect(followLocalRefs(document, { type: 'string' })).toEqual({ type: 'string' })
    expect(followLocalRefs(document, { $ref: '#/components/loop' })).toBeUndefined()
  })
})
