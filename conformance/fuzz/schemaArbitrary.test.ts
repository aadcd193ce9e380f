import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { schemaArbitrary } from './schemaArbitrary.js'

describe('schemaArbitrary: strings with a pattern', () => {
  it('a minLength that needs many repetitions of the pattern still yields matching strings (no endless filter)', () => {
    // The gateway's LoginSignature: 65 bytes of hex at least. At fast-check's default size `+` repeats a few
    // times only, and filtering for the length never ended (the fuzz run hung past its time bound).
    const schema = { type: 'string', pattern: '^0x([0-9a-fA-F]{2})+$', minLength: 132, maxLength: 16386 }
    const values = fc.sample(schemaArbitrary(schema), { numRuns: 10, seed: 7 }) as string[]
    for (const v of values) {
      expect(v).toMatch(/^0x([0-9a-fA-F]{2})+$/)
      expect(v.length).toBeGreaterThanOrEqual(132)
      expect(v.length).toBeLessThanOrEqual(16386)
    }
  })

  it('a pattern no size can meet falls back to plain strings within the length bounds', () => {
    const schema = { type: 'string', pattern: '^a$', minLength: 3, maxLength: 5 }
    const values = fc.sample(schemaArbitrary(schema), { numRuns: 10, seed: 7 }) as string[]
    for (const v of values) expect(v.length).toBeGreaterThanOrEqual(3)
  })
})
