import express, { type Request, type Response } from 'express'
import { compileOperations } from '../../src/shared/http/compileOperations.js'
import type { OperationStage, RequestExchange } from '../../src/shared/http/RequestExchange.js'
import { ResponseValidator } from '../../src/shared/http/ResponseValidator.js'
import { responseValidationStage } from '../../src/shared/http/responseValidationStage.js'
import { runOperationStages } from '../../src/shared/http/runOperationStages.js'
import { listen, type Listening } from './listen.js'

const errorResponse = {
  description: 'error',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
}

/** A small OpenAPI 3.1 document exercising what the pipeline's stages decide on. */
export const stagesDocument = {
  openapi: '3.1.0',
  info: { title: 'stages', version: '1' },
  components: {
    schemas: {
      Error: {
        type: 'object',
        required: ['error', 'message'],
        properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'object' } },
      },
    },
    securitySchemes: {
      key: { type: 'apiKey', in: 'header', name: 'X-Key' },
      second: { type: 'apiKey', in: 'header', name: 'X-Second' },
    },
  },
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        security: [],
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z/:]+$' } },
          { name: 'n', in: 'query', schema: { type: 'integer', minimum: 1 } },
        ],
        responses: {
          '200': { description: 'ok', content: { 'application/json': { schema: { type: 'object', required: ['id'] } } } },
          '400': errorResponse,
          '500': errorResponse,
        },
      },
      delete: { operationId: 'deleteItem', security: [{ key: [], second: [] }, { key: [] }], responses: { '204': { description: 'gone' } } },
    },
    '/items': {
      post: {
        operationId: 'createItem',
        security: [{ key: [] }],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } } } },
        },
        responses: {
          '201': { description: 'made', content: { 'application/json': { schema: { type: 'object' } } } },
          '400': errorResponse,
          '413': errorResponse,
          '415': errorResponse,
          '501': errorResponse,
        },
      },
    },
    '/either': {
      get: { operationId: 'either', security: [{ key: [] }, {}], responses: { '200': { description: 'ok' } } },
    },
    '/blob': {
      get: { operationId: 'getBlob', security: [], responses: { '200': { description: 'ok', content: { 'text/plain': { schema: { type: 'string' } } } } } },
      head: { operationId: 'headBlob', security: [], responses: { '200': { description: 'exists' } } },
    },
    '/page': {
      get: { operationId: 'getPage', security: [], responses: { '200': { description: 'ok', content: { 'text/plain': { schema: { type: 'string' } } } } } },
    },
  },
}

export const stagesOperations = () => compileOperations(stagesDocument)

/** An exchange for a stage that reads only the request line and headers (no body, no response). */
export function exchangeFor(method: string, url: string, headers: Record<string, string> = {}): RequestExchange {
  const queryIndex = url.indexOf('?')
  const path = queryIndex >= 0 ? url.slice(0, queryIndex) : url
  const req = { method, url, originalUrl: url, path, headers, ip: '127.0.0.1', socket: { remoteAddress: '127.0.0.1' } } as unknown as Request
  const res = { destroyed: false, once: () => undefined } as unknown as Response
  return { req, res, path, query: queryIndex >= 0 ? url.slice(queryIndex + 1) : '', locals: {} }
}

/** Serves the given stages over the stages document (responses validated in `error` mode). */
export async function serveStages(stages: OperationStage[], mapError?: Parameters<typeof runOperationStages>[0]['mapError']): Promise<Listening> {
  const operations = stagesOperations()
  const respond = responseValidationStage({ responseValidator: new ResponseValidator(operations.document as never), mode: 'error' })
  const app = express()
  app.use(runOperationStages({ stages, respond, mapError }))
  return listen(app)
}
