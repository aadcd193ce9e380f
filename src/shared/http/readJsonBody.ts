import type { IncomingMessage } from 'node:http'
import express, { type Request, type Response } from 'express'
import { jsonDepthExceeds } from './jsonDepthExceeds.js'
import { readBufferedJson } from './readBufferedJson.js'
import { isJsonMediaType } from './ResponseValidator.js'
import { errorBody } from './RequestExchange.js'
import type { HttpResult } from './types.js'

export type ReadJsonBodyParameters = {
  /** Largest JSON body accepted (default `1mb`). */
  jsonLimit?: string | number
  /** Deepest nesting of arrays/objects accepted in a JSON body (default 32; deeper → 400 `invalid_json`). */
  jsonMaxDepth?: number
}

export function mediaTypeOf(headers: IncomingMessage['headers']): string {
  return String(headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase()
}

/**
 * Reads a JSON request body into `req.body` (body-parser's `json()`, or at once when it has fully arrived,
 * `readBufferedJson`); any other media type is left unread on the request for the handler. Answers what is
 * wrong with the body (400 `invalid_json`, 413, 415), or `undefined` once it is read (or there is none). Only a
 * body still arriving gives a promise.
 */
export function createJsonBodyReader({ jsonLimit = '1mb', jsonMaxDepth = 32 }: ReadJsonBodyParameters = {}) {
  /** The parser's limit in bytes, for the fast path (0: a limit it does not read, the parser alone decides). */
  const jsonLimitBytes = typeof jsonLimit === 'number' ? jsonLimit : /^\d+mb$/i.test(jsonLimit) ? Number.parseInt(jsonLimit, 10) * 1024 * 1024 : 0
  const jsonParser = express.json({ limit: jsonLimit, type: (req) => isJsonMediaType(mediaTypeOf(req.headers)) })
  const depthProblem = (body: unknown): HttpResult | undefined =>
    jsonDepthExceeds(body, jsonMaxDepth) ? { status: 400, body: errorBody('invalid_json', `The request body nests deeper than ${jsonMaxDepth} levels.`) } : undefined

  return (req: Request, res: Response): HttpResult | undefined | Promise<HttpResult | undefined> => {
    const headers = req.headers
    // No body (type-is's `hasBody`, the parser's own first check): nothing to read, no promise to make.
    if (headers['transfer-encoding'] === undefined && Number.isNaN(Number(headers['content-length']))) return undefined
    if (isJsonMediaType(mediaTypeOf(headers))) {
      const buffered = readBufferedJson(req, jsonLimitBytes)
      if (buffered) {
        if ('invalid' in buffered) return { status: 400, body: errorBody('invalid_json', 'The request body is not valid JSON.') }
        ;(req as { body?: unknown }).body = buffered.body
        return depthProblem(buffered.body)
      }
    }
    return new Promise<HttpResult | undefined>((resolve) => {
      jsonParser(req, res, (err?: unknown) => {
        if (!err) return resolve(depthProblem((req as { body?: unknown }).body))
        const e = err as { type?: string; message?: string }
        if (e.type === 'entity.too.large') return resolve({ status: 413, body: errorBody('payload_too_large', 'The request body is too large.') })
        if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported')
          return resolve({ status: 415, body: errorBody('unsupported_media_type', e.message ?? 'Unsupported encoding.') })
        if (e.type === 'request.aborted') return resolve({ status: 400, body: errorBody('request_aborted', 'The request was aborted.') })
        return resolve({ status: 400, body: errorBody('invalid_json', 'The request body is not valid JSON.') })
      })
    })
  }
}
