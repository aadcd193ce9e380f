import { describe, expect, it } from 'vitest'
import { EngineError, engineErrorStatus } from './engine/errors.js'
import { createErrorMapper } from './app.js'
import { ModelServerError, modelServerErrorStatus } from './errors.js'
import { errorShapesOf } from './errorShapes.js'

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
