import { describe, expect, it } from 'vitest'
import { loadOpenApiDocument } from '../shared/http/index.js'
import { modelServerSpecPath } from './app.js'
import { errorShapesOf } from './errorShapes.js'

const errorResponse = (schema: string) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } })

describe('errorShapesOf: the error shape of a route is what the document declares for it', () => {
  it('reads the shape from the error responses, following $refs, whatever the operationId', () => {
    const shapeOf = errorShapesOf({
      paths: {
        '/api/thing': { post: { operationId: 'openaiLookingName', responses: { '400': { $ref: '#/components/responses/Bad' } } } },
        '/v1/x': { post: { operationId: 'plainName', responses: { '200': {}, '500': errorResponse('OpenAIError') } } },
        '/v2/a/b': {
          get: { operationId: 'getB', responses: { '404': errorResponse('RegistryError') } },
          head: { operationId: 'headB', responses: { '404': { description: 'no body' } } },
        },
        '/v2': { get: { operationId: 'versionCheck', responses: { '200': {} } } },
        '/alone': { get: { operationId: 'alone', responses: { '200': {} } } },
      },
      components: { responses: { Bad: errorResponse('Error') } },
    })
    expect(shapeOf('openaiLookingName')).toBe('ollama') // a prefix decides nothing
    expect(shapeOf('plainName')).toBe('openai')
    expect(shapeOf('getB')).toBe('oci')
    expect(shapeOf('headB')).toBe('oci') // no error body declared: the shape declared on its path
    expect(shapeOf('versionCheck')).toBe('oci') // …or below it
    expect(shapeOf('alone')).toBe('ollama')
    expect(shapeOf(undefined)).toBe('ollama')
  })

  it('refuses a document that declares two shapes for one operation', () => {
    expect(() =>
      errorShapesOf({ paths: { '/x': { get: { operationId: 'mixed', responses: { '400': errorResponse('Error'), '500': errorResponse('OpenAIError') } } } } }),
    ).toThrow(/mixed declares error bodies of more than one shape/)
  })

  it("gives the model server's document the four families it serves: /api Ollama, /v1 OpenAI (but /v1/messages Anthropic), /v2 OCI", () => {
    const document = loadOpenApiDocument(modelServerSpecPath) as { paths: Record<string, Record<string, { operationId?: string }>> }
    const shapeOf = errorShapesOf(document)
    for (const [path, item] of Object.entries(document.paths)) {
      for (const operation of Object.values(item)) {
        if (!operation?.operationId) continue
        const expected = path === '/v1/messages' ? 'anthropic' : path.startsWith('/v1/') ? 'openai' : path === '/v2' || path.startsWith('/v2/') ? 'oci' : 'ollama'
        expect(shapeOf(operation.operationId), `${operation.operationId} ${path}`).toBe(expected)
      }
    }
  })
})
