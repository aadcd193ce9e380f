import { type Document, OpenAPIBackend, type Operation, type Options } from 'openapi-backend'
import { compileOperationMatcher } from './compileOperationMatcher.js'
import { createAjv } from './createAjv.js'
import { type ParsedRequestValidation, prepareParsedRequestValidation, type RequestValidatorFunction } from './validateParsedRequest.js'
import type { OperationInfo, SecurityRequirements } from './types.js'

/** What the pipeline needs of an operation, worked out once instead of on every request. */
export type CompiledOperation = {
  info: OperationInfo
  /** openapi-backend's flattened operation (what its public `parseRequest` / `validateRequest` take). */
  operation: Operation
  /** Every scheme named by the requirements, once each, in order. */
  schemes: string[]
  /** Per requirement object, its scheme names (all must be satisfied; `{}` is always satisfied). */
  requirements: string[][]
  /** The document's path has no `{parameter}`: path parameters are `{}` without parsing. */
  literalPath: boolean
  /** Request media types the operation documents, lower-case. */
  documentedMedia: string[]
  /**
   * No parameters and no request body: with a literal path and no query string the validators can only
   * pass (path `{}`, query `{}`, any headers and cookies, no body schema), so they are not run.
   */
  nothingToValidate: boolean
  /** How its requests are validated without parsing them again (`validateParsedRequest`). */
  validation: ParsedRequestValidation
  /** Its compiled request validators: asked of openapi-backend on the operation's first request, then kept. */
  validators?: readonly RequestValidatorFunction[]
}

/** Why a request has no operation. */
export type Unrouted = 'not_found' | 'method_not_allowed'

export type CompiledOperations = {
  /** openapi-backend, used through its public API only (`getOperations`, `router.parseRequest`, `validator.*`). */
  api: OpenAPIBackend
  /** The dereferenced document. */
  document: Document
  operations: OperationInfo[]
  byId: ReadonlyMap<string, CompiledOperation>
  /**
   * The operation a method and raw path (no query) route to. HEAD is decided here and nowhere else: a documented
   * HEAD operation answers it, else the GET operation of the path (its answer is then sent without a body).
   */
  match(method: string, path: string): CompiledOperation | Unrouted
  /** The operation's compiled request validators (compiled on first use, once). */
  validatorsOf(operation: CompiledOperation): readonly RequestValidatorFunction[]
  /** The methods a raw path has operations for (HEAD wherever GET is): a 405's `Allow` header. */
  allowedMethods(path: string): string[]
}

export class RouterSetupError extends Error {}

/** The methods an `Allow` header can name, in the order it names them. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/**
 * openapi-backend drops a request's trailing slash before matching but compares with the document's paths
 * as written, so `/doc/` in the document would never match. Normalise the document the same way: `/doc/`
 * and `/doc` both route to it.
 */
function withoutTrailingSlashes(document: Record<string, unknown>): Record<string, unknown> {
  const paths = document.paths as Record<string, unknown> | undefined
  if (!paths) return document
  const normalised: Record<string, unknown> = {}
  for (const [path, item] of Object.entries(paths)) normalised[path.length > 1 ? path.replace(/\/+$/, '') : path] = item
  return { ...document, paths: normalised }
}

function toOperationInfo(operation: Operation): OperationInfo {
  return {
    operationId: operation.operationId ?? '',
    method: operation.method,
    pathTemplate: operation.path,
    security: (operation.security ?? []) as SecurityRequirements,
    definition: operation as unknown as Record<string, unknown>,
  }
}

/**
 * Loads an OpenAPI 3.1 document once for the pipeline's stages: openapi-backend dereferences it, flattens it
 * into operations and builds the request validators (`quick` init, Ajv 2020-12 + formats); the matcher is
 * ours (`compileOperationMatcher`: the library's own scans every operation and compiles a RegExp per
 * operation on each call), built once over the library's public `getOperations()` — nothing of the library
 * is replaced or patched. Each operation's security, media types and validation plan are worked out here,
 * so a request is matched once and parsed at most once.
 */
export function compileOperations(document: Record<string, unknown>): CompiledOperations {
  const api = new OpenAPIBackend({
    definition: withoutTrailingSlashes(structuredClone(document)) as unknown as Document,
    quick: true,
    strict: false,
    coerceTypes: true,
    ignoreTrailingSlashes: true,
    validate: () => false, // validation is the pipeline's own stage, after security and the body
    customizeAjv: (_ajv, ajvOptions) =>
      createAjv({ ...(ajvOptions as object), strict: false }) as unknown as ReturnType<NonNullable<Options['customizeAjv']>>,
  })
  api.init()
  const routed = api.getOperations()
  const matcher = compileOperationMatcher(api.router, routed)
  const compiled = new Map<Operation, CompiledOperation>()
  const byId = new Map<string, CompiledOperation>()
  const operations: OperationInfo[] = []
  for (const op of routed) {
    const info = toOperationInfo(op)
    operations.push(info)
    const requirements = ((op.security ?? []) as Record<string, unknown>[]).map((r) => Object.keys(r))
    const entry: CompiledOperation = {
      info,
      operation: op,
      schemes: [...new Set(requirements.flat())],
      requirements,
      literalPath: !op.path.includes('{'),
      nothingToValidate:
        !op.path.includes('{') && ((op.parameters ?? []) as unknown[]).length === 0 && (op as { requestBody?: unknown }).requestBody === undefined,
      validation: prepareParsedRequestValidation(op),
      documentedMedia: Object.keys(((op as { requestBody?: { content?: object } }).requestBody?.content ?? {}) as object).map((m) => m.toLowerCase()),
    }
    compiled.set(op, entry)
    if (!byId.has(info.operationId)) byId.set(info.operationId, entry)
  }

  const matchExactly = (method: string, path: string): CompiledOperation | Unrouted => {
    try {
      return compiled.get(matcher({ method, path }, true)!)!
    } catch (error) {
      return error instanceof Error && error.message.startsWith('405') ? 'method_not_allowed' : 'not_found'
    }
  }

  return {
    api,
    document: api.definition,
    operations,
    byId,
    match(method, path) {
      if (method !== 'HEAD') return matchExactly(method, path)
      const head = matcher({ method, path })
      return head ? compiled.get(head)! : matchExactly('GET', path)
    },
    validatorsOf(operation) {
      return (operation.validators ??= (api.validator.getRequestValidatorsForOperation(operation.info.operationId) ?? []) as RequestValidatorFunction[])
    },
    allowedMethods(path) {
      const methods = ALLOW_ORDER.filter((method) => matcher({ method, path }) !== undefined)
      if (methods.includes('GET') && !methods.includes('HEAD')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD')
      return methods
    },
  }
}
