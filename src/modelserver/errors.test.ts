import { describe, expect, it } from 'vitest'
import { EngineError, engineErrorStatus } from './engine/errors.js'
import { createErrorMapper } from './createErrorMapper.js'
import { ModelServerError, modelServerErrorStatus, UnreadableBodyError } from './errors.js'
import { errorShapesOf } from './errorShapes.js'
import { InvalidJsonError, MethodNotAllowedError, NoOperationError, PayloadTooLargeError, RequestNotValidError, routerRefusalRows } from '../shared/http/index.js'

describe("the model server's one error table", () => {
  it('gives each code one status: a digest mismatch is the client’s upload (400) or the registry’s blob (502), two codes', () => {
    expect(new ModelServerError('digest_mismatch', 'x').status).toBe(400)
    expect(new ModelServerError('registry_digest_mismatch', 'x').status).toBe(502)
    expect(new ModelServerError('invalid_manifest', 'x').status).toBe(400)
    expect(new ModelServerError('registry_manifest_invalid', 'x').status).toBe(502)
  })

  it('holds the engine codes too, so an engine error and its ModelServerError answer the same status', () => {
    for (const [code, status] of Object.entries(engineErrorStatus)) expect(modelServerErrorStatus[code as keyof typeof modelServerErrorStatus], code).toBe(status)
    const map = createErrorMapper(undefined, (t) => t, errorShapesOf({ paths: {} }))
    expect(map(new EngineError('input_too_long', 'too long'), 'generate')).toEqual({ status: 400, body: { error: 'too long' } })
    expect(map(new ModelServerError('server_busy', 'busy'), 'chat')).toEqual({ status: 503, body: { error: 'busy' } })
    expect(map(new Error('/home/secret/path'), 'chat')).toEqual({ status: 500, body: { error: 'internal error' } })
  })
})

describe("the router's refusals through the one mapper, in the route's shape", () => {
  const map = createErrorMapper(undefined)
  const missingModel = new RequestNotValidError([{ location: 'body', path: '/', message: "must have required property 'model'" }])
  const badRole = new RequestNotValidError([{ location: 'body', path: '/messages/0/role', message: 'must be equal to one of the allowed values' }])

  it("gives every refusal of the router the router's status", () => {
    for (const [code, row] of Object.entries(routerRefusalRows)) expect(modelServerErrorStatus[code as keyof typeof modelServerErrorStatus], code).toBe(row.status)
  })

  it("words them as Ollama on Ollama's routes", () => {
    expect(map(new NoOperationError('GET', '/api/nothing'), undefined, '/api/nothing')).toEqual({ status: 404, body: { error: '404 page not found: GET /api/nothing' }, component: 'Error' })
    expect(map(new MethodNotAllowedError('GET', '/api/chat', ['POST']), undefined, '/api/chat')).toEqual({ status: 405, body: { error: 'method GET not allowed on /api/chat' }, headers: { Allow: 'POST' }, component: 'Error' })
    expect(map(missingModel, 'chat')).toEqual({ status: 400, body: { error: 'model is required' } })
    expect(map(new InvalidJsonError(undefined, 'Unexpected end of JSON input'), 'chat')).toEqual({ status: 400, body: { error: 'invalid JSON: Unexpected end of JSON input' } })
    expect(map(new PayloadTooLargeError('request entity too large'), 'chat')).toEqual({ status: 413, body: { error: 'request entity too large' } })
    expect(map(new UnreadableBodyError('charset.unsupported', 'unsupported charset "LATIN-2"'), 'chat')).toEqual({ status: 400, body: { error: 'unsupported charset "LATIN-2"' } })
  })

  it("names the field at fault in OpenAI's param, and words a path of the OpenAI family as OpenAI", () => {
    const shapes = errorShapesOf({ paths: { '/v1/chat/completions': { post: { operationId: 'openaiChatCompletions', responses: { '400': { content: { 'application/json': { schema: { $ref: '#/components/schemas/OpenAIError' } } } } } } } } })
    const openai = createErrorMapper(undefined, (t) => t, shapes)
    expect(openai(badRole, 'openaiChatCompletions').body).toEqual({ error: { message: 'body /messages/0/role: must be equal to one of the allowed values', type: 'invalid_request_error', param: 'messages[0].role', code: null } })
    expect(openai(new NoOperationError('GET', '/v1/nothing'), undefined, '/v1/nothing')).toMatchObject({ status: 404, component: 'OpenAIError', body: { error: { message: '404 page not found: GET /v1/nothing', code: null } } })
  })

  it('answers the registry routes with the distribution codes', () => {
    expect(map(new NoOperationError('GET', '/v2/x/y/nothing'), undefined, '/v2/x/y/nothing')).toMatchObject({ status: 404, component: 'RegistryError', body: { errors: [{ code: 'NAME_UNKNOWN' }] } })
    expect(map(new MethodNotAllowedError('DELETE', '/v2/', ['GET']), undefined, '/v2/')).toMatchObject({ status: 405, body: { errors: [{ code: 'UNSUPPORTED', detail: { method: 'DELETE' } }] } })
    expect(map(new PayloadTooLargeError(), undefined, '/v2/x/manifests/latest')).toMatchObject({ status: 413, body: { errors: [{ code: 'MANIFEST_INVALID', detail: { reason: 'entity.too.large' } }] } })
  })

  it('answers a refusal that asks for no body with none, whatever the shape (the browser guard, as Ollama)', () => {
    const refused = new ModelServerError('forbidden', 'origin not allowed', { answer: { empty: true } })
    expect(map(refused, undefined, '/v1/models')).toEqual({ status: 403 })
    expect(map(refused, 'chat')).toEqual({ status: 403 })
  })
})
