/**
 * The generated Zod validators agree with the documents: every JSON request-body example, every path and
 * query parameter example and every 2xx JSON response example parses with the generated `z<Op>Body`,
 * `z<Op>Path`, `z<Op>Query` and `z<Op>Response` schemas. Servers and clients validate with these, so a
 * disagreement (a format, a nullable, a union) would reject what the contract promises.
 */
import { describe, expect, it } from 'vitest'
import type { z } from 'zod/v4'
import { type DocName, deref, documentExists, isObject, type Json, type JsonObject, loadDoc, operations } from './specHelpers.js'

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1)

function jsonExamples(doc: JsonObject, media: Json | undefined): { name: string; value: unknown }[] {
  if (!isObject(media)) return []
  const out: { name: string; value: unknown }[] = []
  if ('example' in media) out.push({ name: 'example', value: media.example })
  if (isObject(media.examples)) {
    for (const [name, ex] of Object.entries(media.examples)) {
      const v = deref(doc, ex, '').value
      if (isObject(v) && 'value' in v) out.push({ name, value: v.value })
    }
  }
  return out
}

const loaders: Record<DocName, () => Promise<Record<string, unknown>>> = {
  gateway: () => import('../../generated/gateway/zod.gen.js'),
  modelserver: () => import('../../generated/modelserver/zod.gen.js'),
}

describe.each((['gateway', 'modelserver'] as const).filter(documentExists))('generated zod of %s accepts the examples', (name) => {
  const doc = loadDoc(name)

  it('request bodies, parameters and 2xx responses', async () => {
    const zod = (await loaders[name]()) as Record<string, z.ZodType | undefined>
    const failures: string[] = []
    let checked = 0
    const parse = (symbol: string, value: unknown, where: string) => {
      const schema = zod[symbol]
      if (schema === undefined) {
        failures.push(`${where}: generated ${symbol} is missing`)
        return
      }
      checked++
      const result = schema.safeParse(value)
      if (!result.success) failures.push(`${where}: ${result.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`)
    }
    for (const op of operations(doc)) {
      const P = pascal(op.operationId)
      const body = deref(doc, op.op.requestBody, '').value
      const json = isObject(body) && isObject(body.content) ? body.content['application/json'] : undefined
      for (const ex of jsonExamples(doc, json)) parse(`z${P}Body`, ex.value, `${op.operationId} body ${ex.name}`)

      const pathItem = (doc.paths as JsonObject)[op.path] as JsonObject
      const params = [...((pathItem.parameters ?? []) as Json[]), ...((op.op.parameters ?? []) as Json[])]
        .map((p) => deref(doc, p, '').value)
        .filter(isObject)
      for (const location of ['path', 'query'] as const) {
        const values: Record<string, unknown> = {}
        for (const p of params.filter((x) => x.in === location)) {
          if ('example' in p) values[String(p.name)] = p.example
        }
        if (Object.keys(values).length > 0) parse(`z${P}${location === 'path' ? 'Path' : 'Query'}`, values, `${op.operationId} ${location}`)
      }

      for (const [status, r] of Object.entries((op.op.responses ?? {}) as JsonObject)) {
        if (!/^2\d\d$/.test(status)) continue
        const resp = deref(doc, r, '').value
        const media = isObject(resp) && isObject(resp.content) ? resp.content['application/json'] : undefined
        for (const ex of jsonExamples(doc, media)) parse(`z${P}Response`, ex.value, `${op.operationId} ${status} ${ex.name}`)
      }
    }
    expect(failures).toEqual([])
    expect(checked).toBeGreaterThan(name === 'gateway' ? 60 : 15)
  })
})
