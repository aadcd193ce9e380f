import type { IncomingMessage } from 'node:http'
import express, { type Request, type Response } from 'express'
import { jsonDepthExceeds } from './jsonDepthExceeds.js'
import { readBufferedJson } from './readBufferedJson.js'
import { isJsonMediaType } from './ResponseValidator.js'
import { InvalidJsonError, PayloadTooLargeError, RequestAbortedError, UnsupportedMediaTypeError } from './routerRefusals.js'

export type ReadJsonBodyParameters = {
  /** Largest JSON body accepted (default `1mb`). */
  jsonLimit?: string | number
  /** Deepest nesting of arrays/objects accepted in a JSON body (default 32; deeper → `invalid_json`). */
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
 * `readBufferedJson`); any other media type is left unread on the request for the handler. Gives back what is
 * wrong with the body as a coded refusal (`routerRefusals.ts`: invalid JSON, too large, an encoding it cannot
 * read, aborted), or `undefined` once it is read (or there is none). Only a body still arriving gives a promise.
 */
export function createJsonBodyReader({ jsonLimit = '1mb', jsonMaxDepth = 32 }: ReadJsonBodyParameters = {}) {
  /** The parser's limit in bytes, for the fast path (0: a limit it does not read, the parser alone decides). */
  const jsonLimitBytes = typeof jsonLimit === 'number' ? jsonLimit : /^\d+mb$/i.test(jsonLimit) ? Number.parseInt(jsonLimit, 10) * 1024 * 1024 : 0
  const jsonParser = express.json({ limit: jsonLimit, type: (req) => isJsonMediaType(mediaTypeOf(req.headers)) })
  const depthProblem = (body: unknown): Error | undefined =>
    jsonDepthExceeds(body, jsonMaxDepth) ? new InvalidJsonError(`The request body nests deeper than ${jsonMaxDepth} levels.`) : undefined

  return (req: Request, res: Response): Error | undefined | Promise<Error | undefined> => {
    const headers = req.headers
    // No body (type-is's `hasBody`, the parser's own first check): nothing to read, no promise to make.
    if (headers['transfer-encoding'] === undefined && Number.isNaN(Number(headers['content-length']))) return undefined
    if (isJsonMediaType(mediaTypeOf(headers))) {
      const buffered = readBufferedJson(req, jsonLimitBytes)
      if (buffered) {
        if ('invalid' in buffered) return new InvalidJsonError()
        ;(req as { body?: unknown }).body = buffered.body
        return depthProblem(buffered.body)
      }
    }
    return new Promise<Error | undefined>((resolve) => {
      jsonParser(req, res, (err?: unknown) => {
        if (!err) return resolve(depthProblem((req as { body?: unknown }).body))
        const e = err as { type?: string; message?: string }
        if (e.type === 'entity.too.large') return resolve(new PayloadTooLargeError(e.message))
        if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return resolve(new UnsupportedMediaTypeError(e.message ?? 'Unsupported encoding.'))
        if (e.type === 'request.aborted') return resolve(new RequestAbortedError())
        return resolve(new InvalidJsonError(undefined, e.message))
      })
    })
  }
}
