/**
 * (b) Every example in both OpenAPI documents — request and response bodies, parameters, headers and
 * schema-level examples — validates against its schema (Ajv 2020 + ajv-formats). Also: every request
 * body and every response body carries at least one example, and the AsyncAPI message examples
 * validate against their payloads.
 */
import { describe, expect, it } from 'vitest'
import {
  createValidator,
  type DocName,
  deref,
  documentExists,
  escapePointer,
  isObject,
  type Json,
  type JsonObject,
  loadDoc,
  loadYaml,
  operations,
} from './specHelpers.js'

interface ExampleCase {
  where: string
  schemaPointer: string
  value: unknown
}

/**
 * Collects every example with the pointer of the schema it must satisfy. OpenAPI objects (media types,
 * parameters, headers) are found where they are defined, so each component is checked once.
 */
export function collectExamples(doc: JsonObject): ExampleCase[] {
  const cases: ExampleCase[] = []
  const visit = (node: Json, pointer: string, inSchema: boolean, key: string) => {
    if (Array.isArray(node)) {
      node.forEach((x, i) => visit(x, `${pointer}/${i}`, inSchema, String(i)))
      return
    }
    if (!isObject(node)) return
    if (inSchema) {
      // Schema object: `examples` (array) and the deprecated `example`.
      if (Array.isArray(node.examples)) {
        node.examples.forEach((value, i) => cases.push({ where: `${pointer}/examples/${i}`, schemaPointer: pointer, value }))
      }
      if ('example' in node && key !== 'properties') {
        cases.push({ where: `${pointer}/example`, schemaPointer: pointer, value: node.example })
      }
    } else if ('schema' in node && ('example' in node || 'examples' in node)) {
      // Media type, parameter or header object.
      const schemaPointer = `${pointer}/schema`
      const push = (where: string, value: unknown) => cases.push({ where, schemaPointer, value })
      if ('example' in node) push(`${pointer}/example`, node.example)
      if (isObject(node.examples)) {
        for (const [name, ex] of Object.entries(node.examples)) {
          const resolved = deref(doc, ex, `${pointer}/examples/${name}`)
          if (isObject(resolved.value) && 'value' in resolved.value) {
            push(`${pointer}/examples/${name} (${resolved.pointer})`, resolved.value.value)
          }
        }
      }
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === 'example' || (k === 'examples' && !inSchema)) continue
      if (k === 'examples' && inSchema && Array.isArray(v)) continue
      // Below `schema` (and in components/schemas) every object is a schema or a map of schemas.
      const childInSchema = inSchema || k === 'schema' || (pointer === '#/components' && k === 'schemas')
      visit(v, `${pointer}/${escapePointer(k)}`, childInSchema, k)
    }
  }
  visit(doc, '#', false, '')
  return cases
}

/** Request and response media types that carry no example at all. */
export function mediaTypesWithoutExamples(doc: JsonObject): string[] {
  const missing: string[] = []
  const hasExample = (mt: JsonObject, schemaRef: Json | undefined) => {
    if ('example' in mt || (isObject(mt.examples) && Object.keys(mt.examples).length > 0)) return true
    // A schema-level example also documents the body.
    const schema = deref(doc, schemaRef, '').value
    return isObject(schema) && (Array.isArray(schema.examples) || 'example' in schema)
  }
  for (const o of operations(doc)) {
    const body = deref(doc, o.op.requestBody, '').value
    if (isObject(body) && isObject(body.content)) {
      for (const [mt, m] of Object.entries(body.content)) {
        if (isObject(m) && !hasExample(m, m.schema)) missing.push(`${o.operationId} request ${mt}`)
      }
    }
    for (const [status, r] of Object.entries((o.op.responses ?? {}) as JsonObject)) {
      const resp = deref(doc, r, '').value
      if (!isObject(resp)) continue
      if (isObject(resp.content)) {
        for (const [mt, m] of Object.entries(resp.content)) {
          if (isObject(m) && !hasExample(m, m.schema)) missing.push(`${o.operationId} ${status} ${mt}`)
        }
      }
      if (isObject(resp.headers)) {
        for (const [h, hv] of Object.entries(resp.headers)) {
          const header = deref(doc, hv, '').value
          if (isObject(header) && !('example' in header) && !isObject(header.examples)) {
            missing.push(`${o.operationId} ${status} header ${h}`)
          }
        }
      }
    }
    const pathItem = (doc.paths as JsonObject)[o.path] as JsonObject
    for (const p of [...((pathItem.parameters ?? []) as Json[]), ...((o.op.parameters ?? []) as Json[])]) {
      const param = deref(doc, p, '').value
      if (isObject(param) && !('example' in param) && !isObject(param.examples)) {
        missing.push(`${o.operationId} parameter ${String(param.name)}`)
      }
    }
  }
  return missing
}

const docs: DocName[] = ['gateway', 'modelserver']

describe.each(docs)('examples of openapi/%s.yaml', (name) => {
  const present = documentExists(name)
  const doc = present ? loadDoc(name) : {}
  const cases = present ? collectExamples(doc) : []

  it.skipIf(!present)('has examples to check', () => {
    // The gateway alone documents well over a hundred; a walker that finds none is broken.
    expect(cases.length).toBeGreaterThan(name === 'gateway' ? 150 : 20)
  })

  it.skipIf(!present)('every example validates against its schema', () => {
    const { check } = createValidator(doc, `${name}.yaml`)
    const failures = cases
      .map((c) => ({ where: c.where, errors: check(c.schemaPointer, c.value) }))
      .filter((f) => f.errors.length > 0)
    expect(failures).toEqual([])
  })

  it.skipIf(!present)('every request body, response body, response header and parameter has an example', () => {
    expect(mediaTypesWithoutExamples(doc)).toEqual([])
  })
})

describe('the walker is not vacuous', () => {
  it('reports a wrong example', () => {
    const doc = loadDoc('gateway')
    const broken = structuredClone(doc) as JsonObject
    const examples = (broken.components as JsonObject).examples as JsonObject
    ;((examples.LoginChallenge as JsonObject).value as JsonObject).expires_at = 'tomorrow'
    const { check } = createValidator(broken, 'broken.yaml')
    const failures = collectExamples(broken).filter((c) => check(c.schemaPointer, c.value).length > 0)
    expect(failures.map((f) => f.where)).toEqual([
      expect.stringContaining('#/components/examples/LoginChallenge'),
    ])
  })

  it('reports a response without an example', () => {
    const doc = structuredClone(loadDoc('gateway')) as JsonObject
    const paths = doc.paths as JsonObject
    const ok = ((((paths['/health'] as JsonObject).get as JsonObject).responses as JsonObject)['200'] as JsonObject)
    delete ((ok.content as JsonObject)['application/json'] as JsonObject).examples
    expect(mediaTypesWithoutExamples(doc)).toEqual(['getHealth 200 application/json'])
  })
})

describe('AsyncAPI message examples', () => {
  const doc = loadYaml('asyncapi/events.yaml')
  const messages = (doc.components as JsonObject).messages as JsonObject
  it('every message has examples and each validates against its payload', () => {
    const { check } = createValidator(doc, 'events.yaml')
    const failures: string[] = []
    let count = 0
    for (const [name, m] of Object.entries(messages)) {
      const examples = isObject(m) && Array.isArray(m.examples) ? m.examples : []
      if (examples.length === 0) failures.push(`${name}: no example`)
      examples.forEach((ex, i) => {
        count++
        const errors = check(`#/components/messages/${name}/payload`, isObject(ex) ? ex.payload : undefined)
        if (errors.length > 0) failures.push(`${name}[${i}]: ${errors.join('; ')}`)
      })
    }
    expect(failures).toEqual([])
    expect(count).toBeGreaterThanOrEqual(Object.keys(messages).length)
  })

  it('no catalogue payload can carry a private key', () => {
    const { check } = createValidator(doc, 'events.yaml')
    const release = messages.ShadowOverlordReleaseKey as JsonObject
    const ex = structuredClone((release.examples as JsonObject[])[0]!.payload) as JsonObject
    ;(ex.payload as JsonObject).private_key = `0x${'ab'.repeat(32)}`
    expect(check('#/components/messages/ShadowOverlordReleaseKey/payload', ex)).not.toEqual([])
  })
})
