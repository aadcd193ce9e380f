import type { ValidateFunction } from 'ajv'
import { createAjv } from './createAjv.js'
import type { HttpResult } from './types.js'

type ResponseObject = {
  headers?: Record<string, { required?: boolean; schema?: Record<string, unknown> }>
  content?: Record<string, { schema?: Record<string, unknown> }>
}

type OperationObject = { responses?: Record<string, ResponseObject> }

type StatusPlan = {
  headers: { name: string; lower: string; header: NonNullable<ResponseObject['headers']>[string] }[]
  content: ResponseObject['content']
  mediaTypes: string[]
  bySentType: Map<string, { documentedType: string | undefined; schema: Record<string, unknown> | undefined; isJson: boolean }>
}

/** Media types whose bodies are JSON values. */
export function isJsonMediaType(mediaType: string): boolean {
  const base = mediaType.split(';')[0]!.trim().toLowerCase()
  return base === 'application/json' || base.endsWith('+json')
}

function baseType(mediaType: string): string {
  return mediaType.split(';')[0]!.trim().toLowerCase()
}

function mediaMatches(documented: string, sent: string): boolean {
  const d = baseType(documented)
  const s = baseType(sent)
  if (d === s || d === '*/*') return true
  if (d.endsWith('/*')) return s.startsWith(d.slice(0, -1))
  return false
}

/** Finds the response object for a status: exact code, then `4XX`-style range, then `default`. */
export function findResponse<T>(responses: Record<string, T> | undefined, status: number): T | undefined {
  if (!responses) return undefined
  return responses[String(status)] ?? responses[`${Math.floor(status / 100)}XX`] ?? responses.default
}

/**
 * Checks a response against the (dereferenced) document: the status is documented, the media type is one of
 * the documented ones, a JSON body matches its schema (JSON Schema 2020-12), a string media type gets a string,
 * and documented `required` headers are present and match their schemas. Returns human-readable errors.
 */
export class ResponseValidator {
  private readonly ajv = createAjv()
  private readonly cache = new Map<unknown, ValidateFunction>()

  constructor(private readonly document: { components?: { schemas?: Record<string, unknown> } }) {}

  private compile(schema: unknown): ValidateFunction {
    let validate = this.cache.get(schema)
    if (!validate) {
      validate = this.ajv.compile(schema as object)
      this.cache.set(schema, validate)
    }
    return validate
  }

  /**
   * What the document says about one operation's status, looked up once per (operation, status) and media
   * type rather than on every response: the response object, its headers, its media types.
   */
  private readonly plans = new WeakMap<OperationObject, Map<number, StatusPlan | null>>()

  private planFor(operation: OperationObject, status: number): StatusPlan | undefined {
    let byStatus = this.plans.get(operation)
    if (!byStatus) {
      byStatus = new Map()
      this.plans.set(operation, byStatus)
    }
    let plan = byStatus.get(status)
    if (plan === undefined) {
      const response = findResponse(operation.responses, status)
      plan = response
        ? {
            headers: Object.entries(response.headers ?? {}).map(([name, header]) => ({ name, lower: name.toLowerCase(), header })),
            content: response.content,
            mediaTypes: Object.keys(response.content ?? {}),
            bySentType: new Map(),
          }
        : null
      byStatus.set(status, plan)
    }
    return plan ?? undefined
  }

  validate(operation: OperationObject, result: HttpResult, method = 'get'): string[] {
    const errors: string[] = []
    const plan = this.planFor(operation, result.status)
    if (!plan) return [`status ${result.status} is not documented`]
    if (plan.headers.length > 0) {
      const headers = lowerCaseKeys(result.headers)
      for (const { name, lower, header } of plan.headers) {
        const value = headers[lower]
        if (value === undefined) {
          if (header.required) errors.push(`required header ${name} is missing`)
          continue
        }
        if (header.schema) {
          const validate = this.compile(header.schema)
          const coerced = coerceHeader(value, header.schema)
          if (!validate(coerced)) errors.push(`header ${name}: ${this.ajv.errorsText(validate.errors)}`)
        }
      }
    }
    const content = plan.content
    const hasBody = result.stream !== undefined || (result.body !== undefined && result.body !== null && result.body !== '')
    if (!content || plan.mediaTypes.length === 0) {
      if (hasBody && method !== 'head') errors.push(`status ${result.status} documents no body but one was sent`)
      return errors
    }
    if (!hasBody) {
      if (method !== 'head' && result.status !== 204 && result.status !== 304)
        errors.push(`status ${result.status} documents a body but none was sent`)
      return errors
    }
    const sentType = result.contentType ?? (typeof result.body === 'string' || Buffer.isBuffer(result.body) ? 'text/plain' : 'application/json')
    let media = plan.bySentType.get(sentType)
    if (!media) {
      const documentedType = plan.mediaTypes.find((d) => mediaMatches(d, sentType))
      media = { documentedType, schema: documentedType ? content[documentedType]?.schema : undefined, isJson: isJsonMediaType(sentType) }
      // Handlers choose content types from a small fixed set; the bound only guards against an unusual one.
      if (plan.bySentType.size < 32) plan.bySentType.set(sentType, media)
    }
    if (!media.documentedType) {
      errors.push(`media type ${baseType(sentType)} is not documented for status ${result.status} (documented: ${plan.mediaTypes.join(', ')})`)
      return errors
    }
    if (result.stream !== undefined) return errors
    const schema = media.schema
    if (!schema) return errors
    if (media.isJson) {
      const validate = this.compile(schema)
      if (!validate(result.body)) errors.push(`body: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}`)
    } else if (schema.type === 'string' && typeof result.body !== 'string' && !Buffer.isBuffer(result.body)) {
      errors.push('body: expected a string')
    }
    return errors
  }

  /**
   * Compiles every schema `validate` may need for the operation now (response headers and JSON bodies), so a
   * caller that checks many responses (the fuzzer) does not pay Ajv's compilation in the middle of its run.
   */
  precompile(operation: OperationObject): void {
    for (const response of Object.values(operation.responses ?? {}) as Array<{ headers?: Record<string, { schema?: unknown }>; content?: Record<string, { schema?: unknown }> }>) {
      for (const header of Object.values(response.headers ?? {})) if (header.schema) this.compile(header.schema)
      for (const [type, media] of Object.entries(response.content ?? {})) if (media.schema && isJsonMediaType(type)) this.compile(media.schema)
    }
  }

  /** Validates a JSON value against `#/components/schemas/<name>` (for responses outside any operation). */
  validateComponent(name: string, value: unknown): string[] {
    const schema = this.document.components?.schemas?.[name]
    if (!schema) return [`schema ${name} is not in the document`]
    const validate = this.compile(schema)
    return validate(value) ? [] : [`body: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}`]
  }
}

function lowerCaseKeys(headers: HttpResult['headers']): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = v
  return out
}

function coerceHeader(value: unknown, schema: Record<string, unknown>): unknown {
  const type = schema.type
  if (typeof value === 'number' && (type === 'string' || (Array.isArray(type) && type.includes('string')))) return String(value)
  if (typeof value === 'string' && (type === 'integer' || type === 'number') && value.trim() !== '' && !Number.isNaN(Number(value)))
    return Number(value)
  return value
}
