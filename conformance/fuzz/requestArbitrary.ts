/**
 * A fast-check arbitrary of requests for one operation: a valid request derived from its parameters and
 * body schema (schemaArbitrary.ts), then one mutation — none, a hostile string (prototype member names,
 * path traversal, control characters, injections, oversize) in a path parameter, query parameter or body
 * field, a wrong type, an out-of-range number, a missing required field, an extra field (`__proto__` among
 * them), malformed JSON, or a wrong content type. Credentials are added when the request is sent.
 */
import fc from 'fast-check'
import type { Operation } from './operations.js'
import { type Schema, schemaArbitrary } from './schemaArbitrary.js'

/** Names of Object.prototype members and other strings that break code using names as keys or paths. */
export const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString']
export const HOSTILE_STRINGS = [
  ...PROTOTYPE_NAMES,
  'company:__proto__:cabinet:ceo',
  'company:constructor:cabinet:constructor',
  '__proto__:latest',
  'constructor:latest',
  'library/__proto__:latest',
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '....//....//etc/passwd',
  '..',
  '.',
  'a\u0000b',
  '\u0000',
  'line\r\nX-Injected: 1',
  '\u001b[31mred',
  '\u202eevil',
  '\ud800',
  '😀🚀',
  "' OR '1'='1' --",
  '${jndi:ldap://127.0.0.1/a}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '%s%s%s%n',
  'NaN',
  '-1',
  '1e309',
  '0x',
  '',
  ' ',
  'A'.repeat(5000),
]
const OVERSIZE = 'B'.repeat(300_000)

export type Mutation =
  | 'valid'
  | 'hostile-path'
  | 'hostile-query'
  | 'hostile-field'
  | 'wrong-type'
  | 'out-of-range'
  | 'missing-required'
  | 'extra-field'
  | 'malformed-json'
  | 'wrong-content-type'
  | 'oversize'

export type FuzzRequest = {
  operation: string
  mutation: Mutation
  method: string
  path: string
  headers: Record<string, string>
  /** JSON text, plain text, or a multipart form's parts. */
  body?: { text: string } | { parts: { name: string; value: string; filename?: string }[] }
}

/** A request before it is written out: its parameters by place, the media type and the body as a value. */
export type Draft = { path: Record<string, string>; query: Record<string, string>; headers: Record<string, string>; mediaType?: string; body?: unknown }

/** Lone surrogates become U+FFFD (encodeURIComponent throws on them). */
const wellFormed = (s: string) => s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
const headerSafe = (s: string) => s.replace(/[^\x20-\x7e]/g, '').slice(0, 4000)

function asString(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value)
}

function preferredMediaType(op: Operation): string | undefined {
  const types = [...op.body.keys()]
  return types.find((t) => t === 'application/json') ?? types.find((t) => t.includes('json')) ?? types[0]
}

export function draftArbitrary(op: Operation): fc.Arbitrary<Draft> {
  const record = (where: 'path' | 'query' | 'header') => {
    const model: Record<string, fc.Arbitrary<string>> = Object.create(null)
    const required: string[] = []
    for (const p of op.parameters.filter((x) => x.in === where)) {
      model[p.name] = schemaArbitrary(p.schema).map(asString)
      if (p.required) required.push(p.name)
    }
    return fc.record(model, { requiredKeys: required }).map((o) => ({ ...o }) as Record<string, string>)
  }
  const mediaType = preferredMediaType(op)
  const body = mediaType ? schemaArbitrary(op.body.get(mediaType)) : fc.constant(undefined)
  const withBody = op.bodyRequired ? body : fc.option(body, { freq: 5, nil: undefined })
  return fc.record({ path: record('path'), query: record('query'), headers: record('header'), mediaType: fc.constant(mediaType), body: withBody })
}

const MUTATIONS: { kind: Mutation; weight: number }[] = [
  { kind: 'valid', weight: 6 },
  { kind: 'hostile-path', weight: 3 },
  { kind: 'hostile-query', weight: 1 },
  { kind: 'hostile-field', weight: 3 },
  { kind: 'wrong-type', weight: 2 },
  { kind: 'out-of-range', weight: 1 },
  { kind: 'missing-required', weight: 1 },
  { kind: 'extra-field', weight: 2 },
  { kind: 'malformed-json', weight: 1 },
  { kind: 'wrong-content-type', weight: 1 },
  { kind: 'oversize', weight: 1 },
]

type Choice = { kind: Mutation; a: number; b: number; hostile: string; wrong: unknown }

const choiceArbitrary: fc.Arbitrary<Choice> = fc.record({
  kind: fc.oneof(...MUTATIONS.map((m) => ({ arbitrary: fc.constant(m.kind), weight: m.weight }))),
  a: fc.nat(),
  b: fc.nat(),
  hostile: fc.constantFrom(...HOSTILE_STRINGS),
  wrong: fc.constantFrom<unknown>(null, 0, -1, 1.5, true, 'text', [], {}, [1, 2], { a: 1 }, 2 ** 53, -(2 ** 63), 1e308),
})

/** Paths to every leaf (and object) inside a JSON value. */
function locations(value: unknown, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const here = [...at, Array.isArray(value) ? Number(k) : k]
      out.push(here)
      locations(v, here, out)
    }
  }
  return out
}

function setAt(root: unknown, where: (string | number)[], value: unknown): unknown {
  if (where.length === 0) return value
  const copy = structuredClone(root) as Record<string | number, unknown>
  let node = copy
  for (const key of where.slice(0, -1)) node = node[key] as Record<string | number, unknown>
  Object.defineProperty(node, where.at(-1)!, { value, enumerable: true, writable: true, configurable: true })
  return copy
}

function deleteAt(root: unknown, where: (string | number)[]): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>
  let node = copy
  for (const key of where.slice(0, -1)) node = node[key] as Record<string | number, unknown>
  if (Array.isArray(node)) node.splice(Number(where.at(-1)), 1)
  else delete node[where.at(-1)!]
  return copy
}

const pickOf = <T>(list: T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined)

function mutate(op: Operation, draft: Draft, c: Choice): { draft: Draft; kind: Mutation; bodyText?: string; contentType?: string } {
  const d: Draft = { ...draft, path: { ...draft.path }, query: { ...draft.query }, headers: { ...draft.headers } }
  const json = d.mediaType?.includes('json') ?? false
  const leaves = json ? locations(d.body) : []
  switch (c.kind) {
    case 'hostile-path': {
      const name = pickOf(Object.keys(d.path), c.a)
      if (!name) break
      d.path[name] = c.hostile
      return { draft: d, kind: c.kind }
    }
    case 'hostile-query': {
      const name = pickOf(op.parameters.filter((p) => p.in === 'query').map((p) => p.name), c.a)
      if (!name) break
      d.query[name] = c.hostile
      return { draft: d, kind: c.kind }
    }
    case 'hostile-field': {
      const stringLeaves = leaves.filter((l) => typeof l.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], d.body) === 'string')
      const where = pickOf(stringLeaves.length ? stringLeaves : leaves, c.a)
      if (where) d.body = setAt(d.body, where, c.hostile)
      else if (d.mediaType?.startsWith('multipart/') && d.body && typeof d.body === 'object') d.body = { ...d.body, filename: c.hostile }
      else if (json) d.body = c.hostile
      else break
      return { draft: d, kind: c.kind }
    }
    case 'wrong-type': {
      const where = pickOf(leaves, c.a)
      d.body = where ? setAt(d.body, where, c.wrong) : c.wrong
      if (!d.mediaType) d.mediaType = 'application/json'
      return { draft: d, kind: c.kind }
    }
    case 'out-of-range': {
      const numeric = leaves.filter((l) => typeof l.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], d.body) === 'number')
      const where = pickOf(numeric, c.a)
      if (!where) break
      d.body = setAt(d.body, where, pickOf([-1, -(2 ** 31), 2 ** 31, 2 ** 53 + 2, -1e308, 1e308, 0.5], c.b))
      return { draft: d, kind: c.kind }
    }
    case 'missing-required': {
      const where = pickOf(leaves.filter((l) => l.length === 1), c.a)
      if (where) d.body = deleteAt(d.body, where)
      else if (d.body !== undefined) d.body = undefined
      else {
        const name = pickOf(op.parameters.filter((p) => p.in === 'query' && p.required).map((p) => p.name), c.a)
        if (!name) break
        delete d.query[name]
      }
      return { draft: d, kind: c.kind }
    }
    case 'extra-field': {
      const key = pickOf(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'x-extra', 'polluted'], c.a)!
      const value = pickOf<unknown>([{ polluted: true, isAdmin: true }, c.hostile, 1, null], c.b)
      const base = d.body && typeof d.body === 'object' && !Array.isArray(d.body) ? (d.body as Record<string, unknown>) : {}
      // `"__proto__"` must be an own key of the JSON text, which JSON.stringify of a literal cannot write.
      const rest = JSON.stringify(base)
      const bodyText = `{${JSON.stringify(key)}:${JSON.stringify(value)}${rest === '{}' ? '}' : `,${rest.slice(1)}`}`
      return { draft: d, kind: c.kind, bodyText, contentType: 'application/json' }
    }
    case 'malformed-json': {
      const valid = d.body === undefined ? '{"a":1}' : JSON.stringify(d.body) ?? '{}'
      const bodyText = pickOf([valid.slice(0, Math.max(1, valid.length - 1)), `${valid}}`, "{'single': 'quotes'}", '{"a":}', 'undefined', '\u0000', '[', `${valid},`, '{"a":1,"a":2,"__proto__":{"x":1}}', '\ufeff{}'], c.b)!
      return { draft: d, kind: c.kind, bodyText, contentType: 'application/json' }
    }
    case 'wrong-content-type': {
      const contentType = pickOf(['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data', 'application/json; charset=utf-16', 'application/octet-stream', 'image/png'], c.b)!
      const bodyText = d.body === undefined ? 'a=1' : (JSON.stringify(d.body) ?? '')
      return { draft: d, kind: c.kind, bodyText, contentType }
    }
    case 'oversize': {
      const where = pickOf(leaves, c.a)
      const pathName = pickOf(Object.keys(d.path), c.b)
      if (where) d.body = setAt(d.body, where, OVERSIZE)
      else if (pathName) d.path[pathName] = 'C'.repeat(10_000)
      else if (json || d.body === undefined) {
        d.body = { oversize: OVERSIZE }
        d.mediaType ??= 'application/json'
      } else break
      return { draft: d, kind: c.kind }
    }
    case 'valid':
      break
  }
  return { draft: d, kind: 'valid' }
}

function render(op: Operation, m: ReturnType<typeof mutate>): FuzzRequest {
  const { draft } = m
  // fetch sends no body with GET or HEAD: those requests vary in their parameters and credentials only
  if (op.method === 'GET' || op.method === 'HEAD') {
    draft.body = undefined
    m = { draft, kind: m.bodyText !== undefined ? 'valid' : m.kind }
  }
  let path = op.path.replace(/\{([^}]+)\}/g, (_x, name: string) => encodeURIComponent(Object.hasOwn(draft.path, name) ? wellFormed(draft.path[name]!) : 'x'))
  const query = new URLSearchParams(Object.entries(draft.query))
  if ([...query.keys()].length) path += `?${query.toString()}`
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(draft.headers)) headers[k] = headerSafe(v)
  let body: FuzzRequest['body']
  if (m.bodyText !== undefined) {
    body = { text: m.bodyText }
    headers['content-type'] = m.contentType ?? 'application/json'
  } else if (draft.body !== undefined && draft.mediaType?.startsWith('multipart/')) {
    const fields = (draft.body && typeof draft.body === 'object' ? draft.body : {}) as Record<string, unknown>
    const parts = Object.entries(fields)
      .filter(([k]) => k !== 'filename')
      .map(([name, value]) => ({ name, value: asString(value), filename: name === 'file' ? asString(fields.filename ?? 'fuzz.bin') : undefined }))
    body = { parts }
  } else if (draft.body !== undefined) {
    body = { text: draft.mediaType?.includes('json') ? JSON.stringify(draft.body) : asString(draft.body) }
    headers['content-type'] = draft.mediaType ?? 'application/json'
  }
  return { operation: op.id, mutation: m.kind, method: op.method, path, headers, body }
}

/** The request a draft is, unmutated. */
export function renderDraft(op: Operation, draft: Draft): FuzzRequest {
  return render(op, { draft, kind: 'valid' })
}

/** Requests the document accepts as far as the drawn values go (no mutation). */
export function validRequestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
  return draftArbitrary(op).map((draft) => renderDraft(op, draft))
}

export function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
  return fc.tuple(draftArbitrary(op), choiceArbitrary).map(([draft, choice]) => render(op, mutate(op, draft, choice)))
}

export type { Schema }
