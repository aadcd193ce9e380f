import { fileURLToPath } from 'node:url'
import { OpenAPIBackend } from 'openapi-backend'
import { describe, expect, it } from 'vitest'
import { compileOperationMatcher, type OperationRouter } from './compileOperationMatcher.js'
import { loadOpenApiDocument } from './loadOpenApiDocument.js'

const documents = ['gateway', 'modelserver'].map(
  (name) => [name, loadOpenApiDocument(fileURLToPath(new URL(`../../../openapi/${name}.yaml`, import.meta.url)))] as const,
)

function outcome(match: () => unknown): string {
  try {
    const op = match() as { operationId?: string } | undefined
    return op ? `op:${op.operationId}` : 'none'
  } catch (error) {
    return `error:${(error as Error).message}`
  }
}

describe.each(documents)('compileOperationMatcher on openapi/%s.yaml', (_name, document) => {
  const api = new OpenAPIBackend({ definition: structuredClone(document) as never, quick: true, validate: false })
  api.init()
  const operations = api.router.getOperations() as { path: string; method: string; operationId?: string }[]
  const compiled = compileOperationMatcher(api.router as unknown as OperationRouter, operations as never[])

  // Every documented path with its template parameters filled in, plus trailing slashes, query strings,
  // unknown paths, extra segments and encoded slashes; every method, in strict and lenient mode.
  const paths = new Set<string>(['/', '', '/nope', '/a/b/c/d', '/users/%2F/permissions', '//health', '/health?x=1'])
  for (const op of operations) {
    const filled = op.path.replace(/\{[^}]+\}/g, 'x1')
    for (const p of [filled, `${filled}/`, `${filled}/extra`, filled.replace(/x1/g, 'a.b'), `${filled}?q=1`]) paths.add(p)
  }
  const methods = ['get', 'GET', 'post', 'put', 'patch', 'delete', 'head', 'options', ' Get ']

  it(`agrees with openapi-backend's matchOperation on ${paths.size} paths × ${methods.length} methods`, () => {
    let compared = 0
    for (const path of paths)
      for (const method of methods)
        for (const strict of [true, false]) {
          const expected = outcome(() => api.router.matchOperation({ method, path, headers: {} } as never, strict))
          expect(outcome(() => compiled({ method, path }, strict)), `${method} ${path} strict=${strict}`).toBe(expected)
          compared++
        }
    expect(compared).toBeGreaterThan(500)
  })
})
