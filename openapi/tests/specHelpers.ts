/**
 * Shared helpers of the spec tests: loading the documents, walking their operations, resolving local
 * `$ref`s and validating values against schemas with Ajv 2020 (+ formats) by JSON pointer.
 */
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { parse } from 'yaml'
import { requiresSession as gateRequiresSession } from '../../src/gate/PublicSet.js'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
export type JsonObject = { [key: string]: Json }

export const documents = {
  gateway: 'openapi/gateway.yaml',
  modelserver: 'openapi/modelserver.yaml',
} as const
export type DocName = keyof typeof documents

export const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

export function documentExists(name: DocName): boolean {
  return existsSync(path.join(repoRoot, documents[name]))
}

export function loadYaml(relPath: string): JsonObject {
  return parse(readFileSync(path.join(repoRoot, relPath), 'utf8')) as JsonObject
}

export function loadDoc(name: DocName): JsonObject {
  return loadYaml(documents[name])
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

const unescapePointer = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~')
export const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1')

/** Value at a local JSON pointer (`#/a/b`). */
export function atPointer(doc: Json, pointer: string): Json | undefined {
  const parts = pointer.replace(/^#/, '').split('/').slice(1).map(unescapePointer)
  let cur: Json | undefined = doc
  for (const p of parts) {
    if (Array.isArray(cur)) cur = cur[Number(p)]
    else if (isObject(cur)) cur = cur[p]
    else return undefined
  }
  return cur
}

/** Follows `$ref` chains of OpenAPI objects (parameters, responses, examples...). Returns value and pointer. */
export function deref(doc: JsonObject, value: Json | undefined, pointer: string): { value: Json | undefined; pointer: string } {
  let cur = value
  let ptr = pointer
  for (let i = 0; i < 20 && isObject(cur) && typeof cur.$ref === 'string'; i++) {
    ptr = cur.$ref
    if (!ptr.startsWith('#')) throw new Error(`external $ref not supported: ${ptr}`)
    cur = atPointer(doc, ptr)
  }
  return { value: cur, pointer: ptr }
}

export interface Operation {
  method: (typeof methods)[number]
  path: string
  operationId: string
  op: JsonObject
  pointer: string
}

export function operations(doc: JsonObject): Operation[] {
  const out: Operation[] = []
  const paths = isObject(doc.paths) ? doc.paths : {}
  for (const [p, item] of Object.entries(paths)) {
    if (!isObject(item)) continue
    for (const method of methods) {
      const op = item[method]
      if (!isObject(op)) continue
      out.push({
        method,
        path: p,
        operationId: String(op.operationId),
        op,
        pointer: `#/paths/${escapePointer(p)}/${method}`,
      })
    }
  }
  return out
}

/**
 * Ajv 2020 holding a whole document under `id`, so any schema inside it can be compiled by pointer
 * (`validatorAt('#/components/schemas/Error')`). OpenAPI extension keywords are tolerated; every format
 * is checked (`binary` and the OpenAPI numeric formats are annotations only).
 */
export function createValidator(doc: JsonObject, id: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true })
  // ajv-formats is CommonJS: depending on the loader its default import is the function or the module.
  const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
    a: Ajv2020,
  ) => Ajv2020
  addFormats(ajv)
  for (const f of ['binary', 'byte', 'int32', 'int64', 'float', 'double', 'password']) ajv.addFormat(f, true)
  ajv.addSchema(doc as object, id)
  const cache = new Map<string, ValidateFunction>()
  const validatorAt = (pointer: string): ValidateFunction => {
    let fn = cache.get(pointer)
    if (!fn) {
      fn = ajv.compile({ $ref: `${id}${pointer}` })
      cache.set(pointer, fn)
    }
    return fn
  }
  const check = (pointer: string, value: unknown): string[] => {
    const fn = validatorAt(pointer)
    if (fn(value)) return []
    return (fn.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
  }
  return { ajv, validatorAt, check }
}

/** The security requirement list of an operation (operation level, else document level). */
export function effectiveSecurity(doc: JsonObject, op: JsonObject): JsonObject[] {
  const sec = op.security ?? doc.security ?? []
  return Array.isArray(sec) ? (sec.filter(isObject) as JsonObject[]) : []
}

/**
 * True when the operation can only be called with a session — the `X-Session-Token` header, its GET/HEAD
 * cookie alternative `sessionCookie` or `/llm/v1`'s `llmBearer`, optionally with the overlord bearer as an
 * alternative (seed 000 §4.2) — the gate's own rule (`requiresSession` of src/gate, docs/design.md).
 */
export function requiresSession(doc: JsonObject, op: JsonObject): boolean {
  return gateRequiresSession(effectiveSecurity(doc, op) as never)
}

/**
 * The per-line schema of each NDJSON stream of the model server. The document describes the
 * `application/x-ndjson` media type as a string (Prism cannot serialise an object stream) and keeps the
 * chunk schemas as components; a stream that fails after it started ends with an `Error` line.
 */
export const ndjsonChunkSchemas: Readonly<Record<string, string>> = {
  generate: 'GenerateChunk',
  chat: 'ChatChunk',
  createModel: 'ProgressChunk',
  pullModel: 'ProgressChunk',
  pushModel: 'ProgressChunk',
}

/** Splits an NDJSON text into its non-empty lines. */
export function ndjsonLines(text: string): string[] {
  return text.split('\n').filter((l) => l.trim() !== '')
}
