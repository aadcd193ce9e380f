import express, { type Request } from 'express'
import { InvalidJsonError, isJsonMediaType, type OperationInfo, type OperationStage, PayloadTooLargeError } from '../../shared/http/index.js'
import { UnreadableBodyError } from '../errors.js'

export type OllamaBodyStageParameters = {
  /** The document's operations (each one's documented JSON request media type is looked up once). */
  operations: readonly OperationInfo[]
  /** Operations whose body is raw bytes (blobs, registry uploads): never parsed, whatever their label. */
  rawBodyOperations: ReadonlySet<string>
  /**
   * Largest JSON body accepted, per operation (`payload_too_large` past it): only the routes that take images or
   * long inputs need megabytes; a management call or a manifest needs kilobytes.
   */
  limit: number | ((operationId: string) => number)
}

/**
 * The model server's body stage, after the route (it knows the operation without matching again) and before
 * validation: Ollama parses the body of its JSON endpoints whatever the Content-Type (`curl -d '{…}'` sends
 * `application/x-www-form-urlencoded`, some clients send none), so a body of an operation documented with a
 * JSON request body is read as that JSON media type, in UTF-8 whatever its `charset` (no 415, which the document
 * does not have). The raw bytes are kept on `req.rawBody` (registry manifests are hashed as sent). Raw-byte operations are never
 * parsed: a blob is bytes even when labelled JSON, and no parser may consume it before the handler hashes it.
 * The validation stage then finds the body already read. A body that cannot be read is refused with a coded error
 * carrying the reader's words (too large, not JSON, anything else), which on-error words in the route's shape.
 */
export function ollamaBodyStage<Locals extends Record<string, unknown>>({
  operations,
  rawBodyOperations,
  limit,
}: OllamaBodyStageParameters): OperationStage<Locals> {
  // operationId → the JSON media type its request body is documented with (`application/json`, the manifest type…).
  const jsonOperations = new Map<string, string>()
  for (const o of operations) {
    const media = Object.keys((o.definition as { requestBody?: { content?: object } }).requestBody?.content ?? {}).find(isJsonMediaType)
    if (media && !rawBodyOperations.has(o.operationId)) jsonOperations.set(o.operationId, media)
  }
  // One parser per distinct limit, made once.
  const parsers = new Map<number, ReturnType<typeof express.json>>()
  const parserFor = (operationId: string) => {
    const bytes = typeof limit === 'number' ? limit : limit(operationId)
    let parser = parsers.get(bytes)
    if (!parser) {
      parser = express.json({
        limit: bytes,
        type: (req) => isJsonMediaType(String(req.headers['content-type'] ?? '').split(';')[0] ?? ''),
        verify: (req, _res, buf) => {
          ;(req as { rawBody?: Buffer }).rawBody = buf
        },
      })
      parsers.set(bytes, parser)
    }
    return parser
  }

  return (exchange) => {
    const req = exchange.req
    const operationId = exchange.context!.operationId
    const json = isJsonMediaType(String(req.headers['content-type'] ?? '').split(';')[0]!.trim())
    const documented = jsonOperations.get(operationId)
    // an empty body too: labelled `text/plain` it would be a 415 the document does not have, not the missing body it is.
    // A JSON label's parameters go as well: Ollama reads the bytes as UTF-8 JSON whatever `charset` says (RFC 8259
    // §8.1, §11: the parameter has no effect), so `application/json; charset=utf-16` on a UTF-8 body is no refusal.
    if (documented && (!json || String(req.headers['content-type']).includes(';'))) req.headers['content-type'] = documented
    if (!hasBody(req)) return undefined
    if (json && rawBodyOperations.has(operationId)) req.headers['content-type'] = 'application/octet-stream'
    if (!json && !documented) return undefined
    return new Promise<Error | undefined>((resolve) => {
      parserFor(operationId)(req, exchange.res, (error?: unknown) => {
        if (!error) return resolve(undefined)
        const e = error as { type?: string; message?: string }
        if (e.type === 'entity.too.large') return resolve(new PayloadTooLargeError(e.message))
        if (e.type === 'entity.parse.failed') return resolve(new InvalidJsonError(undefined, e.message ?? ''))
        resolve(new UnreadableBodyError(e.type, e.message))
      })
    })
  }
}

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0
}
