import type { AddressInfo } from 'node:net'
import type { Server } from 'node:http'
import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCapturingLogger } from '../../../tests/support/createCapturingLogger.js'
import { createOpenApiRouter } from './createOpenApiRouter.js'
import type { ResponseValidationReport } from './types.js'

const Error = {
  type: 'object',
  required: ['error', 'message'],
  properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
}
const errorResponse = { description: 'error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } }

const document = {
  openapi: '3.1.0',
  info: { title: 't', version: '1' },
  components: {
    schemas: { Error },
    securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'X-Token' } },
  },
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        security: [],
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'n', in: 'query', schema: { type: 'integer', minimum: 1 } },
        ],
        responses: {
          '200': {
            description: 'ok',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id'],
                  properties: { id: { type: 'string' }, n: { type: ['integer', 'null'] } },
                  additionalProperties: false,
                },
              },
            },
          },
          '400': errorResponse,
        },
      },
    },
    '/echo': {
      post: {
        operationId: 'echo',
        security: [{ token: [] }],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
            },
          },
        },
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } },
          '400': errorResponse,
          '401': errorResponse,
          '413': errorResponse,
          '415': errorResponse,
        },
      },
    },
    '/upload': {
      post: {
        operationId: 'upload',
        security: [],
        requestBody: {
          required: true,
          content: {
            'multipart/form-data': {
              schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
            },
          },
        },
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object' } } } } },
      },
    },
    '/stream': {
      get: {
        operationId: 'stream',
        security: [],
        responses: { '200': { description: 'ndjson', content: { 'application/x-ndjson': { schema: { type: 'string' } } } } },
      },
    },
    '/page': {
      get: {
        operationId: 'page',
        security: [],
        parameters: [{ name: 'go', in: 'query', schema: { type: 'string' } }],
        responses: {
          '200': { description: 'html', content: { 'text/html': { schema: { type: 'string' } } } },
          '302': { description: 'redirect', headers: { Location: { required: true, schema: { type: 'string' } } } },
        },
      },
    },
    '/wrong': {
      get: {
        operationId: 'wrong',
        security: [],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', required: ['x'] } } } } },
      },
    },
    '/missing': { get: { operationId: 'missing', security: [], responses: { '501': errorResponse } } },
    '/blob': {
      get: { operationId: 'getBlob', security: [], responses: { '200': { description: 'ok', content: { 'text/plain': { schema: { type: 'string' } } } } } },
      head: { operationId: 'headBlob', security: [], responses: { '200': { description: 'exists', headers: { 'X-Exists': { required: true, schema: { type: 'string' } } } } } },
    },
  },
}

let server: Server
let base: string
const reports: ResponseValidationReport[] = []
const captured = createCapturingLogger()

beforeAll(async () => {
  const router = createOpenApiRouter({
    document,
    logger: captured.logger,
    onResponseValidationError: (r) => reports.push(r),
    securityHandlers: { token: (ctx) => ctx.headers['x-token'] === 'good' && { user: 'u' } },
    unauthorized: () => ({ status: 401, body: { error: 'unauthorized', message: 'no token' } }),
    handlers: {
      getItem: (ctx) => ({ status: 200, body: { id: ctx.params.id, n: (ctx.query.n as number | undefined) ?? null } }),
      echo: (ctx) => ({ status: 200, body: { got: ctx.body, security: ctx.security.token } }),
      upload: async (ctx) => {
        let bytes = 0
        for await (const chunk of ctx.raw) bytes += (chunk as Buffer).length
        return { status: 200, body: { bytes, type: ctx.headers['content-type']?.split(';')[0] } }
      },
      stream: () => ({
        status: 200,
        contentType: 'application/x-ndjson',
        stream: (async function* () {
          yield `${JSON.stringify({ i: 1 })}\n`
          yield `${JSON.stringify({ i: 2, done: true })}\n`
        })(),
      }),
      page: (ctx) =>
        ctx.query.go !== undefined
          ? { status: 302, headers: { Location: '/elsewhere' } }
          : { status: 200, contentType: 'text/html; charset=utf-8', body: '<p>hi</p>' },
      wrong: () => ({ status: 200, body: { y: 1 } }),
      getBlob: () => ({ status: 200, contentType: 'text/plain', body: 'blob' }),
      headBlob: () => ({ status: 200, headers: { 'X-Exists': 'yes' } }),
    },
  })
  const app = express()
  app.use(router.handler)
  server = app.listen(0)
  await new Promise((r) => server.once('listening', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(() => new Promise<void>((r) => server.close(() => r())))

describe('createOpenApiRouter', () => {
  it('routes by operationId, decodes path params (colons raw, %2F as a slash) and coerces query types', async () => {
    const res = await fetch(`${base}/items/company:ACME:cabinet%2Fceo?n=3`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ id: 'company:ACME:cabinet/ceo', n: 3 })
  })

  it('rejects invalid query parameters with 400 in the Error shape', async () => {
    const res = await fetch(`${base}/items/a?n=0`)
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.error).toBe('invalid_request')
    expect(body.details.errors[0]).toMatchObject({ location: 'query', path: '/n' })
  })

  it('ignores undocumented query parameters', async () => {
    const res = await fetch(`${base}/items/a?utm_source=x`)
    expect(res.status).toBe(200)
  })

  it('a raw slash in a parameter is a different path (404)', async () => {
    const res = await fetch(`${base}/items/a/b`)
    expect(res.status).toBe(404)
    expect((await res.json()).error).toBe('not_found')
  })

  it('answers 405 for an undocumented method', async () => {
    const res = await fetch(`${base}/items/a`, { method: 'DELETE' })
    expect(res.status).toBe(405)
  })

  it('runs security handlers before reading the body', async () => {
    const res = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' })
    expect(res.status).toBe(401)
  })

  it('validates JSON bodies (Ajv 2020) and passes security results to the handler', async () => {
    const headers = { 'content-type': 'application/json', 'x-token': 'good' }
    const bad = await fetch(`${base}/echo`, { method: 'POST', headers, body: JSON.stringify({ name: '' }) })
    expect(bad.status).toBe(400)
    const malformed = await fetch(`${base}/echo`, { method: 'POST', headers, body: '{not json' })
    expect(malformed.status).toBe(400)
    expect((await malformed.json()).error).toBe('invalid_json')
    const ok = await fetch(`${base}/echo`, { method: 'POST', headers, body: JSON.stringify({ name: 'x' }) })
    expect(ok.status).toBe(200)
    expect(await ok.json()).toEqual({ got: { name: 'x' }, security: { user: 'u' } })
  })

  it('refuses a JSON body nested deeper than 32 levels with 400 invalid_json (a megabyte of brackets included), and accepts 32', async () => {
    const headers = { 'content-type': 'application/json', 'x-token': 'good' }
    const nest = (n: number) => '{"name":"x","extra":' + '['.repeat(n - 1) + ']'.repeat(n - 1) + '}'
    const deep = await fetch(`${base}/echo`, { method: 'POST', headers, body: nest(33) })
    expect(deep.status).toBe(400)
    expect(await deep.json()).toMatchObject({ error: 'invalid_json' })
    const hostile = await fetch(`${base}/echo`, { method: 'POST', headers, body: '['.repeat(500_000) + ']'.repeat(500_000) })
    expect(hostile.status).toBe(400)
    expect((await hostile.json()).error).toBe('invalid_json')
    const ok = await fetch(`${base}/echo`, { method: 'POST', headers, body: nest(32) })
    expect(ok.status).not.toBe(500)
    expect((await ok.json()).error).not.toBe('invalid_json')
  })

  it('rejects an undocumented request media type with 415', async () => {
    const res = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'text/plain', 'x-token': 'good' }, body: 'x' })
    expect(res.status).toBe(415)
  })

  it('leaves a multipart body unread for the handler', async () => {
    const form = new FormData()
    form.append('file', new Blob([new Uint8Array(1000)]), 'f.bin')
    const res = await fetch(`${base}/upload`, { method: 'POST', body: form })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.type).toBe('multipart/form-data')
    expect(body.bytes).toBeGreaterThan(1000)
  })

  it('streams NDJSON', async () => {
    const res = await fetch(`${base}/stream`)
    expect(res.headers.get('content-type')).toBe('application/x-ndjson')
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toEqual([{ i: 1 }, { i: 2, done: true }])
  })

  it('sends HTML and redirects with their documented headers; HEAD has no body', async () => {
    const page = await fetch(`${base}/page`)
    expect(page.headers.get('content-type')).toMatch(/text\/html/)
    expect(await page.text()).toBe('<p>hi</p>')
    const redirect = await fetch(`${base}/page?go=1`, { redirect: 'manual' })
    expect(redirect.status).toBe(302)
    expect(redirect.headers.get('location')).toBe('/elsewhere')
    const head = await fetch(`${base}/page`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
  })

  it('replaces a response that breaks the document with 500 and reports it', async () => {
    const before = reports.length
    const res = await fetch(`${base}/wrong`)
    expect(res.status).toBe(500)
    expect((await res.json()).error).toBe('response_validation_failed')
    expect(reports.length).toBe(before + 1)
    expect(reports.at(-1)!.operationId).toBe('wrong')
  })

  it('routes HEAD to a documented HEAD operation, else to GET', async () => {
    const head = await fetch(`${base}/blob`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('x-exists')).toBe('yes')
    const viaGet = await fetch(`${base}/page`, { method: 'HEAD' })
    expect(viaGet.headers.get('content-type')).toMatch(/text\/html/)
  })

  it('answers 501 for an operation without a handler', async () => {
    const res = await fetch(`${base}/missing`)
    expect(res.status).toBe(501)
  })

  it('answers 400 for malformed percent-encoding', async () => {
    const res = await fetch(`${base}/items/%E0%A4%A`)
    expect(res.status).toBe(400)
  })
})
