/**
 * Whether a request is one the document accepts, judged from the client's side with the same JSON Schema
 * 2020-12 validator the servers use (createAjv): every required parameter present, each parameter valid against
 * its schema (a path, query or header value is text, coerced to the schema's type as the servers coerce it),
 * a documented media type, a body that parses and matches its schema, a required body present. What a
 * generated request *is* decides `negative_data_rejection` and `positive_data_acceptance`, not the mutation
 * that made it: a "hostile" string may well be valid, and a drawn value may miss a format.
 */
import type { ErrorObject, ValidateFunction } from 'ajv'
import { createAjv } from '../../src/shared/http/index.js'
import type { Operation } from './operations.js'
import type { FuzzRequest } from './requestArbitrary.js'
import { exercisedKeywords } from './schemaKeywords.js'

export type Judgement = {
  /** Undefined when the document says nothing about the request (a body sent to an operation that takes none). */
  conforms: boolean | undefined
  /** What the document refuses in the request (empty when it conforms). */
  problems: string[]
  /** The schema keywords the request broke: `<where><schemaPath>` (coverage of the negative side). */
  broken: string[]
  /** The schema keywords its values reached, when it conforms (coverage of the positive side). */
  reached: string[]
}

const bodyAjv = createAjv()
const parameterAjv = createAjv({ coerceTypes: 'array' })
const compiled = new WeakMap<object, ValidateFunction>()

function compile(ajv: typeof bodyAjv, schema: object): ValidateFunction {
  let validate = compiled.get(schema)
  if (!validate) {
    validate = ajv.compile(schema)
    compiled.set(schema, validate)
  }
  return validate
}

const baseType = (contentType: string | undefined) => (contentType ?? '').split(';')[0]!.trim().toLowerCase()
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The documented media type a sent one falls under (exact, `type/*`, or any). */
export function documentedMediaType(op: Operation, sent: string): string | undefined {
  const s = baseType(sent)
  return [...op.body.keys()].find((d) => {
    const b = baseType(d)
    return b === s || b === '*/*' || (b.endsWith('/*') && s.startsWith(b.slice(0, -1)))
  })
}

/**
 * The text a server reads from the body: fetch sends it as UTF-8 bytes. An operation listing the any-type media
 * range reads them as UTF-8 JSON whatever the Content-Type, its charset included (the model server, as Ollama);
 * otherwise the charset the Content-Type names is honoured (the gateway's router: another UTF decodes those bytes
 * into other text, a charset it does not read is its 415) — `undefined` for a charset other than a UTF one a
 * decoder here knows.
 */
export function textAsRead(op: Pick<Operation, 'body'>, contentType: string | undefined, text: string): string | undefined {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase()
  if (!charset || charset === 'utf-8' || charset === 'utf8' || [...op.body.keys()].some((d) => baseType(d) === '*/*')) return text
  // JSON is Unicode (RFC 8259 §8.1): a body in another charset is one the document's JSON does not describe
  if (!charset.startsWith('utf-')) return undefined
  try {
    return new TextDecoder(charset).decode(Buffer.from(text, 'utf8'))
  } catch {
    return undefined
  }
}

const paramWrappers = new WeakMap<object, object>()
function parameterValidator(schema: object): ValidateFunction {
  let wrapper = paramWrappers.get(schema)
  if (!wrapper) paramWrappers.set(schema, (wrapper = { type: 'object', properties: { value: schema } }))
  return compile(parameterAjv, wrapper)
}

const describe = (errors: ErrorObject[] | null | undefined) => (errors ?? []).slice(0, 2).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')

export function judgeRequest(op: Operation, req: FuzzRequest): Judgement {
  const problems: string[] = []
  const broken: string[] = []
  const reached = new Set<string>()
  const [rawPath, rawQuery = ''] = req.path.split('?', 2) as [string, string?]
  const names: string[] = []
  const template = new RegExp(`^${op.path.split(/\{([^}]+)\}/).map((part, i) => (i % 2 ? (names.push(part), '([^/]*)') : escape(part))).join('')}$`)
  const segments = template.exec(rawPath)
  const values = new Map<string, string>()
  names.forEach((name, i) => {
    try {
      values.set(`path:${name}`, decodeURIComponent(segments?.[i + 1] ?? ''))
    } catch {
      problems.push(`path ${name} is not valid percent-encoding`)
    }
  })
  for (const [name, value] of new URLSearchParams(rawQuery)) values.set(`query:${name}`, value)
  for (const [name, value] of Object.entries(req.headers)) values.set(`header:${name.toLowerCase()}`, value)
  for (const p of op.parameters) {
    if (p.in === 'cookie') continue
    const key = `${p.in}:${p.in === 'header' ? p.name.toLowerCase() : p.name}`
    if (!values.has(key)) {
      if (p.required) {
        problems.push(`${p.in} ${p.name} is required`)
        broken.push(`${p.in}:${p.name}#required`)
      }
      continue
    }
    const validate = parameterValidator(p.schema)
    const holder = { value: values.get(key) as unknown }
    if (validate(holder)) exercisedKeywords(p.schema, holder.value, `${p.in}:${p.name}`, 0, reached)
    else {
      problems.push(`${p.in} ${p.name}: ${describe(validate.errors)}`)
      for (const e of validate.errors ?? []) broken.push(`${p.in}:${p.name}${e.schemaPath.replace(/^#\/properties\/value/, '')}`)
    }
  }
  const body = req.body
  if (body && op.body.size === 0) return { conforms: undefined, problems: [], broken: [], reached: [] }
  if (!body) {
    if (op.bodyRequired && op.method !== 'GET' && op.method !== 'HEAD') {
      problems.push('the request body is required')
      broken.push('body#required')
    }
  } else if ('parts' in body) {
    const media = documentedMediaType(op, 'multipart/form-data')
    const schema = media ? (op.body.get(media) as { required?: string[] }) : undefined
    if (!media) problems.push('multipart/form-data is not a documented media type')
    for (const field of schema?.required ?? []) {
      if (!body.parts.some((part) => part.name === field)) {
        problems.push(`multipart part ${field} is required`)
        broken.push(`body:${media}#/required`)
      }
    }
  } else {
    const sent = req.headers['content-type']
    const media = sent === undefined ? undefined : documentedMediaType(op, sent)
    if (!media) {
      problems.push(`media type ${baseType(sent) || '(none)'} is not documented (${[...op.body.keys()].join(', ') || 'no body'})`)
      broken.push('body#mediaType')
    } else if (/json/.test(media) || baseType(media) === '*/*') {
      // `*/*` beside a JSON schema: the body is read as JSON whatever its Content-Type (the model server, as Ollama)
      let value: unknown
      const text = textAsRead(op, sent, body.text)
      try {
        // a parser may ignore a leading byte order mark (RFC 8259 §8.1), as the servers' does
        if (text === undefined) throw new Error('unreadable charset')
        value = JSON.parse(text.replace(/^\ufeff/, ''))
      } catch {
        problems.push(text === undefined ? `the body cannot be read in the charset its Content-Type names (${sent})` : 'the body is not JSON')
        broken.push(`body:${media}#json`)
      }
      const schema = op.body.get(media)
      if (value !== undefined && schema && Object.keys(schema).length) {
        const validate = compile(bodyAjv, schema)
        if (validate(value)) exercisedKeywords(schema, value, `body:${media}`, 0, reached)
        else {
          problems.push(`body: ${describe(validate.errors)}`)
          for (const e of validate.errors ?? []) broken.push(`body:${media}${e.schemaPath.slice(1)}`)
        }
      }
    }
  }
  const conforms = problems.length === 0
  return { conforms, problems, broken, reached: conforms ? [...reached] : [] }
}
