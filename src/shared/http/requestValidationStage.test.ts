import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serveStages, stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import type { Listening } from '../../../tests/support/listen.js'
import { requestValidationStage } from './requestValidationStage.js'
import { routeStage } from './routeStage.js'

let server: Listening
let handled = 0

beforeAll(async () => {
  const operations = stagesOperations()
  server = await serveStages([
    routeStage({ operations }),
    requestValidationStage({ operations, isImplemented: () => true, jsonMaxDepth: 4 }),
    (exchange) => {
      handled++
      return { status: exchange.context!.operationId === 'createItem' ? 201 : 200, body: { id: 'x', body: exchange.context!.body, query: exchange.context!.query } }
    },
  ])
})
afterAll(() => server.close())

const post = (body: string, contentType = 'application/json') =>
  fetch(`${server.url}/items`, { method: 'POST', headers: { 'content-type': contentType }, body })

describe('requestValidationStage', () => {
  it('passes a valid request on with the parsed body and the coerced query, ignoring unknown query parameters', async () => {
    const res = await fetch(`${server.url}/items/abc?n=3&utm_source=x`)
    expect(res.status).toBe(200)
    expect((await res.json()).query).toEqual({ n: 3, utm_source: 'x' })
    const created = await post('{"name":"a"}')
    expect(created.status).toBe(201)
    expect((await created.json()).body).toEqual({ name: 'a' })
  })

  it('refuses what the document does not allow before the handler runs: 400 with the issues', async () => {
    const before = handled
    const bad = await fetch(`${server.url}/items/abc?n=0`)
    expect(bad.status).toBe(400)
    expect((await bad.json()).details.errors[0]).toMatchObject({ location: 'query', path: '/n' })
    const missing = await post('{"name":""}')
    expect(missing.status).toBe(400)
    expect((await missing.json()).details.errors[0]).toMatchObject({ location: 'body', path: '/name' })
    expect(handled).toBe(before)
  })

  it('answers broken JSON 400 invalid_json, too deep JSON 400, an undocumented media type 415', async () => {
    expect(await (await post('{"name":')).json()).toMatchObject({ error: 'invalid_json' })
    const deep = await post('{"name":"a","x":[[[[[1]]]]]}')
    expect(deep.status).toBe(400)
    expect((await deep.json()).error).toBe('invalid_json')
    const text = await post('name=a', 'text/plain')
    expect(text.status).toBe(415)
    expect((await text.json()).error).toBe('unsupported_media_type')
  })
})

describe('requestValidationStage on an operation without handler', () => {
  it('answers 501 before reading or validating the body', async () => {
    const operations = stagesOperations()
    const unimplemented = await serveStages([routeStage({ operations }), requestValidationStage({ operations, isImplemented: () => false })])
    try {
      const res = await fetch(`${unimplemented.url}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"broken' })
      expect(res.status).toBe(501)
      expect((await res.json()).error).toBe('not_implemented')
    } finally {
      await unimplemented.close()
    }
  })
})
