import { describe, expect, it } from 'vitest'
import { stagesDocument, stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import { compileOperations } from './compileOperations.js'

const idOf = (match: ReturnType<ReturnType<typeof stagesOperations>['match']>) => (typeof match === 'string' ? match : match.info.operationId)

describe('compileOperations', () => {
  const operations = stagesOperations()

  it('routes a method and path to its operation, 405 for a known path with another method, 404 otherwise', () => {
    expect(idOf(operations.match('GET', '/items/abc'))).toBe('getItem')
    expect(idOf(operations.match('DELETE', '/items/abc'))).toBe('deleteItem')
    expect(idOf(operations.match('POST', '/items'))).toBe('createItem')
    expect(idOf(operations.match('GET', '/items/'))).toBe('method_not_allowed')
    expect(idOf(operations.match('PUT', '/items/abc'))).toBe('method_not_allowed')
    expect(idOf(operations.match('GET', '/nothing'))).toBe('not_found')
    expect(idOf(operations.match('GET', '/items/a/b'))).toBe('not_found')
  })

  it('decides HEAD in one place: the documented HEAD operation, else the GET operation of the path', () => {
    expect(idOf(operations.match('HEAD', '/blob'))).toBe('headBlob')
    expect(idOf(operations.match('HEAD', '/page'))).toBe('getPage')
    expect(idOf(operations.match('HEAD', '/items'))).toBe('method_not_allowed')
    expect(idOf(operations.match('HEAD', '/nothing'))).toBe('not_found')
  })

  it('works out each operation once: its schemes, requirements, literal path and documented media types', () => {
    const remove = operations.byId.get('deleteItem')!
    expect(remove.schemes).toEqual(['key', 'second'])
    expect(remove.requirements).toEqual([['key', 'second'], ['key']])
    expect(operations.byId.get('getPage')!.literalPath).toBe(true)
    expect(operations.byId.get('getPage')!.nothingToValidate).toBe(true)
    expect(operations.byId.get('getItem')!.literalPath).toBe(false)
    expect(operations.byId.get('createItem')!.documentedMedia).toEqual(['application/json'])
  })

  it("compiles an operation's request validators once and keeps them", () => {
    const create = operations.byId.get('createItem')!
    const first = operations.validatorsOf(create)
    expect(first.length).toBeGreaterThan(0)
    expect(operations.validatorsOf(create)).toBe(first)
  })

  it('leaves the caller\'s document untouched and serves `/doc/` and `/doc` alike', () => {
    const document = structuredClone(stagesDocument) as typeof stagesDocument & { paths: Record<string, unknown> }
    document.paths['/doc/'] = { get: { operationId: 'doc', security: [], responses: { '200': { description: 'ok' } } } }
    const compiled = compileOperations(document)
    expect(idOf(compiled.match('GET', '/doc/'))).toBe('doc')
    expect(idOf(compiled.match('GET', '/doc'))).toBe('doc')
    expect(Object.keys(document.paths)).toContain('/doc/')
  })
})
