import { fileURLToPath } from 'node:url'
import { isDeepStrictEqual } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createOpenApiRouter } from './createOpenApiRouter.js'
import { loadOpenApiDocument } from './loadOpenApiDocument.js'
import { isValidatableBody, prepareParsedRequestValidation, type RequestValidatorFunction, validateParsedRequest } from './validateParsedRequest.js'

/** What neither document has yet, and the code must still treat as openapi-backend does: coercible path and header parameters, array query parameters. */
const synthetic = {
  openapi: '3.1.0',
  info: { title: 'synthetic', version: '1' },
  paths: {
    '/items/{id}': {
      post: {
        operationId: 'postItem',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
          { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
          { name: 'limit', in: 'query', schema: { type: 'integer', maximum: 10 } },
          { name: 'X-Count', in: 'header', schema: { type: 'integer' } },
        ],
        requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: false } } } },
        responses: { '200': { description: 'ok' } },
      },
    },
  },
}

const documents = [
  ...['gateway', 'modelserver'].map((name) => [name, loadOpenApiDocument(fileURLToPath(new URL(`../../../openapi/${name}.yaml`, import.meta.url)))] as const),
  ['synthetic', synthetic] as const,
]

type Op = { operationId: string; path: string; method: string; parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { example?: unknown }> } }

/** Request bodies to try on every operation: its documented example, empty, wrong types, extra fields, null, an array. */
function bodiesFor(op: Op): unknown[] {
  const example = op.requestBody?.content?.['application/json']?.example
  const bodies: unknown[] = [undefined, {}, null, [], { model: 5 }, { n: 1 }, { n: '2' }, { prompt: 'x', stream: 'yes' }, { extra: true }, { messages: [{ role: 'user', content: 1 }] }]
  if (example !== undefined) bodies.push(example, { ...(example as object), unknown_field: 1 })
  return bodies
}

/** Query strings to try: none, each documented query parameter with a number, a word, twice, and unknown ones. */
function queriesFor(op: Op): string[] {
  const names = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name)
  const queries = ['', 'utm_source=x', 'a=1&a=2']
  for (const name of names) queries.push(`${name}=3`, `${name}=abc`, `${name}=1&${name}=2`, `${name}=`, `${name}=true`)
  if (names.length > 1) queries.push(names.map((n, i) => `${n}=${i}`).join('&'))
  return queries
}

const headerSets: Record<string, string>[] = [
  { 'content-type': 'application/json' },
  { 'content-type': 'application/json; charset=utf-8', 'x-session-token': 'st_x', 'payment-signature': 'abc' },
  { 'content-type': 'text/plain' },
  { 'content-type': 'application/json', 'x-count': '7' },
  { 'content-type': 'application/json', 'x-count': 'many' },
  {},
]

describe.each(documents)("validateParsedRequest on the %s document agrees with openapi-backend's validateRequest", (_name, document) => {
  const router = createOpenApiRouter({ document: document as never, handlers: {} })
  const api = router.api
  const operations = api.router.getOperations() as unknown as Op[]

  it('on every operation × bodies × query strings × headers: same errors, same coerced query', () => {
    let compared = 0
    let failing = 0
    const mismatches: { case: string; what: string; got: unknown; expected: unknown }[] = []
    for (const op of operations) {
      const prepared = prepareParsedRequestValidation(op)
      const validators = (api.validator.getRequestValidatorsForOperation(op.operationId) ?? []) as RequestValidatorFunction[]
      for (const path of [op.path.replace(/\{[^}]+\}/g, '12'), op.path.replace(/\{[^}]+\}/g, 'abc')])
      for (const body of bodiesFor(op))
        for (const query of queriesFor(op))
          for (const headers of headerSets) {
            if (prepared.needsFullValidation || !isValidatableBody(body)) continue
            const request = { method: op.method, path, query, headers, body }
            const expected = api.validator.validateRequest(structuredClone(request) as never, op as never) // the operation itself: by id, openapi-backend rebuilds its whole operation list on every call
            // What the router hands over: its own parse of path and query (the same parser openapi-backend uses).
            const parsed = api.router.parseRequest(structuredClone(request) as never, op as never)
            const headersSeen = structuredClone(headers)
            const params = structuredClone(parsed.params ?? {}) as Record<string, string>
            const paramsBefore = structuredClone(params)
            const got = validateParsedRequest(validators, prepared, { params, query: (parsed.query ?? {}) as Record<string, unknown>, headers: headersSeen, body: structuredClone(body) })
            // Compared with node's deep equality and reported at the end: ~200,000 cases, where one `expect` each
            // took most of a minute of CPU (the assertions are the same; a differing case names itself).
            const differs = (what: string, a: unknown, b: unknown) => {
              if (!isDeepStrictEqual(a, b)) mismatches.push({ case: `${op.operationId} ?${query} ${JSON.stringify(headers)} ${JSON.stringify(body)}`, what, got: a, expected: b })
            }
            differs('errors', got.errors ?? null, expected.errors ?? null)
            if (!expected.errors) differs('coerced query', got.query, expected.coerced?.query)
            // Coercion never writes into the request's own parameters or headers.
            differs('params untouched', params, paramsBefore)
            differs('headers untouched', headersSeen, headers)
            compared++
            if (expected.errors) failing++
          }
    }
    expect(mismatches.slice(0, 5), `${mismatches.length} cases differ`).toEqual([])
    // Enough of both outcomes that the comparison means something.
    expect(compared).toBeGreaterThan(200)
    expect(failing).toBeGreaterThan(50)
    expect(compared - failing).toBeGreaterThan(20)
  })

  it('leaves cookie parameters and bare JSON values to the full validator', () => {
    expect(prepareParsedRequestValidation({ parameters: [{ name: 'sid', in: 'cookie' }] }).needsFullValidation).toBe(true)
    expect(prepareParsedRequestValidation({ parameters: [{ name: 'f', in: 'query', content: { 'application/json': {} } }] }).needsFullValidation).toBe(true)
    expect(prepareParsedRequestValidation({ parameters: [{ name: 'days', in: 'query', schema: { type: 'integer' } }] }).needsFullValidation).toBe(false)
    expect(isValidatableBody('text')).toBe(false)
    expect(isValidatableBody(5)).toBe(false)
    expect(isValidatableBody(null)).toBe(true)
  })
})
