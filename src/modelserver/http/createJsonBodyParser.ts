import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express'
import { isJsonMediaType, type OpenApiRouter } from '../../shared/http/index.js'

/** Operations whose JSON may carry base64 images or long inputs: the large limit. */
const LARGE_BODY_OPERATIONS = new Set(['generate', 'chat', 'embed', 'embeddings', 'openaiChatCompletions', 'openaiCompletions', 'openaiEmbeddings'])

export type JsonBodyLimits = {
  /** Generation, chat and embeddings (base64 images): default 64 MiB (`MODELSERVER_MAX_JSON_BYTES`). */
  largeBytes: number
  /** Everything else — management, registry manifests, unrouted paths: 1 MiB. */
  smallBytes: number
}

/**
 * JSON bodies parsed with a limit per route (413 past it) instead of one 512 MB limit for all: a management call
 * or a manifest never needs more than a few kilobytes, and only the routes that take images need megabytes. The
 * raw bytes are kept (`rawBody`) for registry manifests, whose digest is of the bytes as sent.
 */
export function createJsonBodyParser(router: OpenApiRouter, limits: JsonBodyLimits): RequestHandler {
  const options = (limit: number) =>
    express.json({
      limit,
      type: (req) => isJsonMediaType(String(req.headers['content-type'] ?? '').split(';')[0] ?? ''),
      verify: (req, _res, buf) => {
        ;(req as { rawBody?: Buffer }).rawBody = buf
      },
    })
  const large = options(limits.largeBytes)
  const small = options(limits.smallBytes)
  return (req: Request, res: Response, next: NextFunction) => {
    const operation = router.matchOperation(req.method, req.path)
    return (operation && LARGE_BODY_OPERATIONS.has(operation.operationId) ? large : small)(req, res, next)
  }
}
