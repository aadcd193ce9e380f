import { describe, expect, it } from 'vitest'
import { BaseError } from './BaseError.js'
import { defineError } from './defineError.js'

const NotFound = defineError('NotFoundError', 'thing_not_found', (id: string) => `no thing ${id}`)
const TooLarge = defineError('TooLargeError', 'too_large', (max: bigint, cause?: unknown) => ({ message: `above ${max}`, meta: { max: String(max) }, cause, fields: { max } }), {
  docsPath: 'docs/limits.md#size',
})

describe('defineError', () => {
  it('makes a BaseError class: instanceof, the code, the name, the message from the arguments', () => {
    const error = new NotFound('a1')
    expect(error).toBeInstanceOf(NotFound)
    expect(error).toBeInstanceOf(BaseError)
    expect(error).toBeInstanceOf(Error)
    expect(error).not.toBeInstanceOf(TooLarge)
    expect(error.code).toBe('thing_not_found')
    expect(NotFound.code).toBe('thing_not_found')
    expect(error.name).toBe('NotFoundError')
    expect(NotFound.name).toBe('NotFoundError')
    expect(error.shortMessage).toBe('no thing a1')
    expect(String(error.stack)).toContain('NotFoundError: no thing a1')
  })

  it('keeps meta, cause and fields, and points the message at its docs page', () => {
    const cause = new Error('disk full')
    const error = new TooLarge(10n, cause)
    expect(error.meta).toEqual({ max: '10' })
    expect(error.max).toBe(10n)
    expect(error.cause).toBe(cause)
    expect(error.docsPath).toBe('docs/limits.md#size')
    expect(error.message).toBe('above 10\n\nDocs: docs/limits.md#size')
    expect(error.shortMessage).toBe('above 10')
  })

  it('can be extended like a written class', () => {
    class Narrower extends NotFound {}
    expect(new Narrower('x')).toBeInstanceOf(NotFound)
    expect(new Narrower('x').code).toBe('thing_not_found')
  })
})

describe('BaseError.walk', () => {
  it('finds the first error of the cause chain that matches, outermost first', () => {
    const root = new NotFound('deep')
    const middle = new Error('while reading', { cause: root })
    const outer = new TooLarge(1n, middle)
    expect(outer.walk((e) => e instanceof NotFound)).toBe(root)
    expect(outer.walk((e) => e instanceof TooLarge)).toBe(outer)
    expect(outer.walk((e) => e instanceof RangeError)).toBeUndefined()
  })

  it('without a predicate gives the innermost cause, and a cycle of causes ends the walk', () => {
    const root = new Error('root')
    expect(new TooLarge(1n, new Error('mid', { cause: root })).walk()).toBe(root)
    const a = new TooLarge(1n)
    const b = new Error('b', { cause: a })
    ;(a as { cause?: unknown }).cause = b
    expect(a.walk((e) => e instanceof RangeError)).toBeUndefined()
    expect([a, b]).toContain(a.walk())
  })
})

describe('a stackless refusal', () => {
  it('captures no stack frames, leaves the process’s stack limit as it was, and is otherwise the same error', () => {
    const Refused = defineError('RefusedError', 'refused', () => 'refused', { stackless: true })
    const Faulted = defineError('FaultedError', 'faulted', () => 'faulted')
    const limit = Error.stackTraceLimit
    const refused = new Refused()
    expect(Error.stackTraceLimit).toBe(limit)
    expect(refused.stack).not.toMatch(/\n\s+at /)
    expect([refused.code, refused.shortMessage, refused instanceof Refused]).toEqual(['refused', 'refused', true])
    expect(new Faulted().stack).toMatch(/\n\s+at /)
  })
})
