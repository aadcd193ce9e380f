import type { ErrorObject } from 'ajv'

/** One of openapi-backend's compiled request validators (an Ajv function over `{path, query, header, cookie, requestBody}`). */
export type RequestValidatorFunction = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

/** What `validateParsedRequest` needs to know of an operation, worked out once. */
export type ParsedRequestValidation = {
  /** Query parameters documented as arrays: a single value is validated as a one-element array. */
  arrayQueryParameters: ReadonlySet<string>
  /** Path parameters are documented: they are copied before validation (coercion writes into what it validates). */
  hasPathParameters: boolean
  /** Header parameters are documented: the headers are copied before validation (same reason). */
  hasHeaderParameters: boolean
  /**
   * The operation documents something only openapi-backend's own `validateRequest` handles (cookie parameters,
   * which it parses from the header; query parameters with `content: application/json`, which it checks for
   * malformed JSON in the raw query string): such a request is validated by it instead.
   */
  needsFullValidation: boolean
}

type Parameter = { name: string; in: string; schema?: { type?: unknown }; content?: Record<string, unknown> }

export function prepareParsedRequestValidation(operation: { parameters?: unknown }): ParsedRequestValidation {
  const parameters = ((operation.parameters ?? []) as Parameter[]).filter((p) => p && typeof p === 'object' && 'in' in p)
  return {
    arrayQueryParameters: new Set(parameters.filter((p) => p.in === 'query' && p.schema?.type === 'array').map((p) => p.name)),
    hasPathParameters: parameters.some((p) => p.in === 'path'),
    hasHeaderParameters: parameters.some((p) => p.in === 'header'),
    needsFullValidation: parameters.some((p) => p.in === 'cookie' || (p.in === 'query' && p.content?.['application/json'] !== undefined)),
  }
}

export type ParsedRequest = {
  /** Path parameters as the router parsed them (left untouched). */
  params: Record<string, string>
  /** Query as the router parsed it; array conversion and type coercion happen in it (it becomes the request's query). */
  query: Record<string, unknown>
  /** Node's request headers (names already lower case). */
  headers: Record<string, string | string[] | undefined>
  /** The parsed JSON body (an object, an array or null), or undefined when the request has none. */
  body: unknown
}

/**
 * openapi-backend's `validateRequest` for a request the router has already parsed: the same validators, fed
 * the same object (`path`, `query`, `header`, `cookie`, `requestBody`), the same errors in the same order —
 * without parsing the request a second time (lodash's header map, cookies, query string and path through
 * `bath-es5`, which cost more than the validation itself). `validateParsedRequest.test.ts` compares both over
 * the gateway's and the model server's documents.
 *
 * Cookies: no parameter of such an operation is a cookie (`needsFullValidation` otherwise), and the cookie
 * schema openapi-backend builds then accepts any object, so `{}` validates exactly as the parsed header would.
 * A JSON body that is a bare string, number or boolean is left to openapi-backend (the caller checks
 * `isValidatableBody`): it re-parses such bodies and reports a `parse` error of its own.
 */
export function validateParsedRequest(
  validators: readonly RequestValidatorFunction[],
  prepared: ParsedRequestValidation,
  request: ParsedRequest,
): { errors: ErrorObject[] | null; query: Record<string, unknown> } {
  const query = request.query
  if (prepared.arrayQueryParameters.size > 0)
    for (const name of Object.keys(query)) if (typeof query[name] === 'string' && prepared.arrayQueryParameters.has(name)) query[name] = [query[name]]
  const parameters: Record<string, unknown> = {
    path: prepared.hasPathParameters ? { ...request.params } : request.params,
    query,
    header: prepared.hasHeaderParameters ? { ...request.headers } : request.headers,
    cookie: {},
  }
  const contentType = mediaType(request.headers['content-type'])
  if (typeof request.body === 'object' || contentType === 'application/json') parameters.requestBody = request.body
  let errors: ErrorObject[] | null = null
  for (const validate of validators) {
    validate(parameters)
    if (validate.errors) (errors ??= []).push(...validate.errors)
  }
  return { errors, query }
}

/** A body `validateParsedRequest` validates as openapi-backend would: none, null, an object or an array. */
export function isValidatableBody(body: unknown): boolean {
  return body === undefined || typeof body === 'object'
}

function mediaType(header: string | string[] | undefined): string {
  const raw = Array.isArray(header) ? header[0] : header
  return String(raw || '')
    .split(';')[0]!
    .trim()
    .toLowerCase()
}
