import { describe, expect, it } from 'vitest'
import { documentProblems } from './DocumentClient.js'

const json = new Headers({ 'content-type': 'application/json' })
const registry404 = JSON.stringify({ errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry', detail: { path: '/v2//x/manifests/y' } }] })
const ollama404 = JSON.stringify({ error: '404 page not found: GET /nope' })

describe('documentProblems for a path no operation has: the fallback bodies of the document', () => {
  it('model server: /v2 paths (also with an empty or `..` segment) answer the OCI RegistryError shape, other paths {error}', () => {
    for (const path of ['/v2//x/manifests/y', '/v2/A.8._Y1_.8./blobs/uploads/valueOf', '/v2/x/../y/z/blobs/uploads/']) {
      expect(documentProblems('modelserver', 'PUT', path, 404, json, registry404), path).toEqual([])
      expect(documentProblems('modelserver', 'PUT', path, 404, json, ollama404), path).not.toEqual([])
    }
    expect(documentProblems('modelserver', 'GET', '/nope', 404, json, ollama404)).toEqual([])
    expect(documentProblems('modelserver', 'GET', '/nope', 404, json, registry404)).not.toEqual([])
  })

  it('model server: /v1 paths answer OpenAI’s error shape; the gateway {error} everywhere', () => {
    const openai = JSON.stringify({ error: { message: '404 page not found', type: 'not_found_error', param: null, code: null } })
    expect(documentProblems('modelserver', 'GET', '/v1/nope', 404, json, openai)).toEqual([])
    expect(documentProblems('modelserver', 'GET', '/v1/nope', 404, json, ollama404)).not.toEqual([])
    expect(documentProblems('gateway', 'GET', '/v2//x', 404, json, JSON.stringify({ error: 'not_found', message: 'no such route' }))).toEqual([])
  })
})
