import { BaseError } from '../shared/errors/BaseError.js'
import { defineError } from '../shared/errors/defineError.js'
import { routerRefusalRows } from '../shared/http/index.js'
import type { EngineErrorCode } from './engine/errors.js'

/** The router's refusals (`src/shared/http/routerRefusals.ts`) with the router's statuses: no route, no method, an invalid request or body. */
const routerRefusalStatus = Object.fromEntries(Object.entries(routerRefusalRows).map(([code, row]) => [code, row.status])) as {
  readonly [code in keyof typeof routerRefusalRows]: (typeof routerRefusalRows)[code]['status']
}

/**
 * The model server's one error table: the HTTP status of every code it throws on purpose (Ollama's statuses:
 * 4xx for client mistakes, 5xx for our own failures and the registry's). The body's shape is the route's
 * (Ollama, OpenAI or OCI: `errorShapes.ts`); anything not ours is a 500 with a generic message.
 */
export const modelServerErrorStatus = {
  // the engine (src/modelserver/engine/errors.ts)
  insert_unsupported: 400,
  thinking_unsupported: 400,
  tools_unsupported: 400,
  vision_unsupported: 400,
  embedding_unsupported: 400,
  completion_unsupported: 400,
  invalid_format: 400,
  invalid_tools: 400, // a tool whose parameters no grammar can honour (engine/jsonSchema.ts)
  invalid_options: 400,
  input_too_long: 400,
  model_load_failed: 500,
  model_unloaded: 500,
  generation_failed: 500,
  // requests: the router's refusals, the guards' (app.ts), then the handlers'
  ...routerRefusalStatus,
  forbidden: 403, // a browser origin or Host name the server does not answer (createBrowserGuard): an empty 403
  bad_request: 400, // a body the JSON reader could not read for another reason than its size or syntax (UnreadableBodyError)
  invalid_model_name: 400,
  raw_mode_unsupported: 400, // /api/generate with raw and a template, system or context: Ollama refuses what raw would ignore
  invalid_model_file: 400,
  no_model_layer: 400,
  model_not_found: 404,
  invalid_api_key: 401, // API keys are configured and the request presented none of them (http/createApiKeyGuard.ts)
  blob_not_found: 404, // HEAD /api/blobs/{digest}: not in the store
  server_busy: 503,
  // the model store
  invalid_digest: 400,
  digest_mismatch: 400,
  invalid_manifest: 400,
  manifest_blob_missing: 500,
  blob_too_large: 413, // MODELSERVER_MAX_BLOB_BYTES, or more bytes than the manifest declared
  too_many_uploads: 429, // MODELSERVER_MAX_UPLOAD_SESSIONS open registry upload sessions
  // a registry this server pulls from or pushes to
  manifest_unknown: 404,
  registry_error: 502,
  registry_not_allowed: 400, // not in MODELSERVER_REGISTRIES: refused before anything is sent
  registry_refused: 502, // a redirect or upload location to a place this server does not go
  registry_unreachable: 502,
  registry_manifest_invalid: 502,
  registry_digest_mismatch: 502,
} as const satisfies Record<EngineErrorCode, number> & Record<string, number>

export type ModelServerErrorCode = keyof typeof modelServerErrorStatus

/**
 * An error the model server answers with the route's error body. It carries a stable code; its status is the
 * code's row of `modelServerErrorStatus`, the one table.
 */
export class ModelServerError extends BaseError<ModelServerErrorCode> {
  override name = 'ModelServerError'
  get status(): number {
    return modelServerErrorStatus[this.code]
  }
}

/**
 * A JSON body the reader could not read for another reason than its size or its syntax (`type`: body-parser's
 * error type, e.g. `charset.unsupported`), in the reader's words.
 */
export const UnreadableBodyError = defineError(
  'UnreadableBodyError',
  'bad_request',
  (type: string | undefined, parserMessage: string | undefined) => ({ message: parserMessage ?? 'bad request', fields: { type } }),
  { stackless: true },
)
export type UnreadableBodyError = InstanceType<typeof UnreadableBodyError>

export function modelNotFound(name: string): ModelServerError {
  return new ModelServerError('model_not_found', `model '${name}' not found`)
}

export function badRequest(message: string): ModelServerError {
  return new ModelServerError('bad_request', message)
}

export function serverBusy(): ModelServerError {
  return new ModelServerError('server_busy', 'server busy, please try again.  maximum pending requests exceeded')
}

/**
 * What a client may read of an error: the short message of an error we raise on purpose (written for clients), a
 * generic text for anything else (a file-system error names absolute paths; its details go to the server log).
 */
export function publicMessage(error: unknown): string {
  if (error instanceof BaseError) return error.shortMessage
  return INTERNAL_ERROR_MESSAGE
}

export const INTERNAL_ERROR_MESSAGE = 'internal error'

/**
 * Replaces the server's directories (models, working, temporary, home) in a client-bound message with a
 * placeholder, longest first: a last line of defence for messages that embed text from a library.
 */
export function createPathRedactor(roots: ReadonlyArray<string | undefined>): (text: string) => string {
  const paths = [...new Set(roots.filter((r): r is string => typeof r === 'string' && r.length > 1))].sort((a, b) => b.length - a.length)
  return (text) => {
    let out = text
    for (const p of paths) if (out.includes(p)) out = out.split(p).join('<server path>')
    return out
  }
}
