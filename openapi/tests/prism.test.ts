/**
 * (c) Prism mocks both documents (on free ports) and every operation answers schema-valid responses:
 * every documented status, every media type and every named example is requested (`Prefer: code=…,
 * example=…` and `Accept`), and the status, the content type, the body (NDJSON line by line) and the
 * documented headers are checked against the document. Base64-JSON headers (`PAYMENT-REQUIRED`,
 * `PAYMENT-RESPONSE`) are decoded and validated against their `contentSchema`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { retryOnAddressInUse } from '../../conformance/testSupport/retryOnAddressInUse.js'
import { freePort, type PrismMock, startPrism } from '../../scripts/mock.js'
import {
  createValidator,
  type DocName,
  deref,
  documentExists,
  documents,
  escapePointer,
  isObject,
  type Json,
  type JsonObject,
  loadDoc,
  ndjsonChunkSchemas,
  ndjsonLines,
  type Operation,
  operations,
} from './specHelpers.js'

interface Probe {
  status: string
  mediaType: string | undefined
  example: string | undefined
}

/** What to ask for: every status × media type × named example of an operation. */
function probesOf(doc: JsonObject, op: Operation): Probe[] {
  const probes: Probe[] = []
  for (const [status, r] of Object.entries((op.op.responses ?? {}) as JsonObject)) {
    if (!/^\d{3}$/.test(status)) continue
    const resp = deref(doc, r, '').value
    const content = isObject(resp) && isObject(resp.content) ? resp.content : {}
    if (Object.keys(content).length === 0) probes.push({ status, mediaType: undefined, example: undefined })
    for (const [mt, m] of Object.entries(content)) {
      const names = isObject(m) && isObject(m.examples) ? Object.keys(m.examples) : []
      if (names.length === 0) probes.push({ status, mediaType: mt, example: undefined })
      for (const name of names) probes.push({ status, mediaType: mt, example: name })
    }
  }
  return probes
}

const exampleOf = (doc: JsonObject, holder: Json | undefined): unknown => {
  if (!isObject(holder)) return undefined
  if ('example' in holder) return holder.example
  if (isObject(holder.examples)) {
    const first = Object.values(holder.examples)[0]
    const v = deref(doc, first, '').value
    return isObject(v) ? v.value : undefined
  }
  return undefined
}

/** Path segments keep `:` raw (documented for `/vault/sign/{agent_id}`); everything else is encoded. */
const encodeSegment = (v: string) => encodeURIComponent(v).replace(/%3A/gi, ':')

/** A valid request for the operation, built from the document's own examples. */
function buildRequest(doc: JsonObject, op: Operation): { url: string; init: RequestInit & { headers: Record<string, string> } } {
  const pathItem = (doc.paths as JsonObject)[op.path] as JsonObject
  const params = [...((pathItem.parameters ?? []) as Json[]), ...((op.op.parameters ?? []) as Json[])]
    .map((p) => deref(doc, p, '').value)
    .filter(isObject)
  let url = op.path
  const query = new URLSearchParams()
  const headers: Record<string, string> = {}
  for (const p of params) {
    const value = exampleOf(doc, p) ?? exampleOf(doc, deref(doc, p.schema, '').value)
    if (value === undefined) {
      if (p.required === true) throw new Error(`${op.operationId}: required parameter ${String(p.name)} has no example`)
      continue
    }
    const text = String(value)
    if (p.in === 'path') url = url.replace(`{${String(p.name)}}`, encodeSegment(text))
    else if (p.in === 'query') query.set(String(p.name), text)
    else if (p.in === 'header' && p.required === true) headers[String(p.name)] = text
  }
  // Credentials for the first security requirement that needs any.
  const security = (op.op.security ?? doc.security ?? []) as JsonObject[]
  if (security.length > 0 && !security.some((req) => Object.keys(req).length === 0)) {
    const schemes = ((doc.components as JsonObject | undefined)?.securitySchemes ?? {}) as JsonObject
    for (const name of Object.keys(security[0]!)) {
      const scheme = schemes[name] as JsonObject
      if (scheme.type === 'http' && scheme.scheme === 'bearer') headers.Authorization = `Bearer ${exampleBearer}`
      else if (scheme.type === 'apiKey' && scheme.in === 'header') headers[String(scheme.name)] = exampleSessionToken
    }
  }
  const init: RequestInit & { headers: Record<string, string> } = { method: op.method.toUpperCase(), headers, redirect: 'manual' }
  const body = deref(doc, op.op.requestBody, '').value
  if (isObject(body) && isObject(body.content)) {
    const [mt, media] = Object.entries(body.content)[0]!
    const value = exampleOf(doc, media) ?? exampleOf(doc, deref(doc, (media as JsonObject).schema, '').value)
    if (mt === 'multipart/form-data') {
      const form = new FormData()
      for (const [k, v] of Object.entries((value ?? {}) as JsonObject)) {
        form.set(k, new Blob([typeof v === 'string' ? v : JSON.stringify(v)], { type: 'application/octet-stream' }), k)
      }
      init.body = form
    } else if (mt === 'application/json' || mt.endsWith('+json')) {
      headers['Content-Type'] = mt
      init.body = JSON.stringify(value ?? {})
    } else {
      headers['Content-Type'] = mt
      init.body = typeof value === 'string' ? value : 'example bytes'
    }
  }
  const qs = query.toString()
  return { url: qs ? `${url}?${qs}` : url, init }
}

let exampleSessionToken = ''
let exampleBearer = ''

/** Checks one answer; returns a list of problems (empty when valid). */
async function checkAnswer(
  doc: JsonObject,
  check: (pointer: string, value: unknown) => string[],
  op: Operation,
  probe: Probe,
  res: Response,
): Promise<string[]> {
  const problems: string[] = []
  if (String(res.status) !== probe.status) {
    problems.push(`status ${res.status}, expected ${probe.status}: ${await res.text()}`)
    return problems
  }
  const { value: resp, pointer: respPointer0 } = deref(doc, (op.op.responses as JsonObject)[probe.status], '')
  const respPointer = respPointer0 || `${op.pointer}/responses/${probe.status}`
  const responseObj = resp as JsonObject
  // Headers
  for (const [name, h] of Object.entries((responseObj.headers ?? {}) as JsonObject)) {
    const { value: header, pointer: hp0 } = deref(doc, h, `${respPointer}/headers/${escapePointer(name)}`)
    if (!isObject(header)) continue
    const got = res.headers.get(name)
    if (got === null) {
      if (header.required === true) problems.push(`header ${name} missing`)
      continue
    }
    const { value: schema, pointer: sp } = deref(doc, header.schema, `${hp0}/schema`)
    const isInteger = isObject(schema) && (schema.type === 'integer' || schema.type === 'number')
    problems.push(...check(sp, isInteger ? Number(got) : got).map((e) => `header ${name}: ${e}`))
    if (isObject(schema) && schema.contentSchema !== undefined) {
      try {
        const decoded = JSON.parse(Buffer.from(got, 'base64').toString('utf8')) as unknown
        problems.push(...check(`${sp}/contentSchema`, decoded).map((e) => `header ${name} (decoded): ${e}`))
      } catch (error) {
        problems.push(`header ${name} is not base64 JSON: ${String(error)}`)
      }
    }
  }
  // Body
  const text = op.method === 'head' ? '' : await res.text()
  if (probe.mediaType === undefined) {
    if (text !== '') problems.push(`unexpected body: ${text.slice(0, 80)}`)
    return problems
  }
  const contentType = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (contentType !== probe.mediaType.toLowerCase()) problems.push(`content-type ${contentType}, expected ${probe.mediaType}`)
  const schemaPointer = `${respPointer}/content/${escapePointer(probe.mediaType)}/schema`
  if (probe.mediaType === 'application/x-ndjson') {
    // The line schema: the media type's `contentSchema` when the document gives one, else the known map.
    const mediaSchema = ((responseObj.content ?? {}) as JsonObject)[probe.mediaType] as JsonObject | undefined
    const declared = isObject(mediaSchema?.schema) && isObject(mediaSchema.schema.contentSchema)
    const known = ndjsonChunkSchemas[op.operationId]
    const chunkPointer = declared ? `${schemaPointer}/contentSchema` : known === undefined ? undefined : `#/components/schemas/${known}`
    if (chunkPointer === undefined) return [...problems, `no chunk schema known for the NDJSON stream of ${op.operationId}`]
    const lines = ndjsonLines(text)
    if (lines.length === 0) problems.push('empty NDJSON stream')
    lines.forEach((line, i) => {
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        problems.push(`line ${i + 1} is not JSON`)
        return
      }
      const asChunk = check(chunkPointer, value)
      const asError = check('#/components/schemas/Error', value)
      if (asChunk.length > 0 && asError.length > 0) problems.push(`line ${i + 1}: ${asChunk.join('; ')}`)
    })
    problems.push(...check(schemaPointer, text))
  } else if (probe.mediaType === 'application/json' || probe.mediaType.endsWith('+json')) {
    try {
      problems.push(...check(schemaPointer, JSON.parse(text)))
    } catch {
      problems.push(`body is not JSON: ${text.slice(0, 80)}`)
    }
  } else if (probe.mediaType.startsWith('text/')) {
    problems.push(...check(schemaPointer, text))
    if (text === '') problems.push('empty text body')
  }
  return problems
}

const available = (Object.keys(documents) as DocName[]).filter(documentExists)

describe('checkAnswer is not vacuous', () => {
  const doc = loadDoc('gateway')
  const { check } = createValidator(doc, 'gateway.yaml')
  const op = (id: string) => operations(doc).find((o) => o.operationId === id)!
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

  it('rejects a body that breaks the schema, a wrong status and a wrong content type', async () => {
    const probe = { status: '200', mediaType: 'application/json', example: 'ok' }
    expect(await checkAnswer(doc, check, op('getHealth'), probe, json({ status: 'ok', version: '1.0.0', uptime_s: 1 }))).toEqual([])
    expect(await checkAnswer(doc, check, op('getHealth'), probe, json({ status: 'fine', version: '1.0.0', uptime_s: 1 }))).not.toEqual([])
    expect(await checkAnswer(doc, check, op('getHealth'), probe, json({}, 500))).not.toEqual([])
    const html = new Response('{}', { status: 200, headers: { 'content-type': 'text/html' } })
    expect(await checkAnswer(doc, check, op('getHealth'), probe, html)).not.toEqual([])
  })

  it('rejects a missing required header and a base64 header whose JSON breaks its contentSchema', async () => {
    const ok = { arTxId: 'Q5Ugu0gC3vn-8z0W1JHRJKRrBxnBD0wpr3v9aLQXk6M', sha256: 'ab'.repeat(32), sizeBytes: 1, winc: null, settlement: { success: true, transaction: '0x1', network: 'eip155:8453' } }
    const probe = { status: '200', mediaType: 'application/json', example: 'stored' }
    const header = (v: unknown) => ({ 'PAYMENT-RESPONSE': Buffer.from(JSON.stringify(v)).toString('base64') })
    expect(await checkAnswer(doc, check, op('storeFile'), probe, json(ok, 200, header(ok)))).toEqual([])
    expect(await checkAnswer(doc, check, op('storeFile'), probe, json(ok))).toEqual(['header PAYMENT-RESPONSE missing'])
    const bad = await checkAnswer(doc, check, op('storeFile'), probe, json(ok, 200, header({ ...ok, arTxId: 'short' })))
    expect(bad.join()).toContain('header PAYMENT-RESPONSE (decoded)')
  })
})

describe.each(available)('Prism mock of openapi/%s.yaml', (name) => {
  const doc = loadDoc(name)
  const { check } = createValidator(doc, `${name}.yaml`)
  const ops = operations(doc)
  let mock: PrismMock
  let requests = 0

  beforeAll(async () => {
    if (name === 'gateway') {
      const components = doc.components as JsonObject
      exampleSessionToken = String(((components.parameters as JsonObject).SessionTokenHeaderRequired as JsonObject).example)
      const verify = ((doc.paths as JsonObject)['/admin/shadow/verify'] as JsonObject).post as JsonObject
      const ok = (((verify.responses as JsonObject)['200'] as JsonObject).content as JsonObject)['application/json'] as JsonObject
      exampleBearer = String(((Object.values(ok.examples as JsonObject)[0] as JsonObject).value as JsonObject).jwt)
    }
    mock = await retryOnAddressInUse(async () => await startPrism(documents[name], await freePort()))
  })
  afterAll(async () => {
    await mock?.stop()
  })

  it.each(ops.map((o) => [o.operationId, o] as const))('%s answers schema-valid for every documented response', async (_id, op) => {
    const { url, init } = buildRequest(doc, op)
    const failures: string[] = []
    for (const probe of probesOf(doc, op)) {
      const prefer = [`code=${probe.status}`, ...(probe.example ? [`example=${probe.example}`] : [])].join(', ')
      const headers = { ...init.headers, Prefer: prefer, Accept: probe.mediaType ?? '*/*' }
      const res = await fetch(`${mock.url}${url}`, { ...init, headers })
      requests++
      const problems = await checkAnswer(doc, check, op, probe, res)
      if (problems.length > 0) failures.push(`${op.method.toUpperCase()} ${url} [${prefer}; ${probe.mediaType ?? '-'}]: ${problems.join(' | ')}`)
    }
    expect(failures).toEqual([])
  })

  it('answered at least one request per documented response', () => {
    expect(requests).toBeGreaterThanOrEqual(ops.reduce((n, o) => n + probesOf(doc, o).length, 0))
    expect(requests).toBeGreaterThan(0)
  })

  it.runIf(name === 'gateway')('POST /store without payment: 402 quote with PAYMENT-REQUIRED = base64 of the body', async () => {
    const form = new FormData()
    form.set('file', new Blob(['hello permanent world']), 'hello.txt')
    const res = await fetch(`${mock.url}/store`, { method: 'POST', body: form, headers: { Prefer: 'code=402, example=quote' } })
    expect(res.status).toBe(402)
    const header = res.headers.get('PAYMENT-REQUIRED')
    expect(header).not.toBeNull()
    const body = (await res.json()) as { x402Version: number; accepts: { network: string }[] }
    expect(check('#/components/schemas/X402PaymentRequired', body)).toEqual([])
    expect(JSON.parse(Buffer.from(header!, 'base64').toString('utf8'))).toEqual(body)
    expect(body.x402Version).toBe(2)
    expect(body.accepts.map((a) => a.network.split(':')[0] === 'algorand' ? 'algorand' : a.network)).toEqual(['eip155:8453', 'eip155:1', 'algorand'])
  })

  it.runIf(name === 'gateway')('a gated route without a session gets 401 from the mock (security is enforced)', async () => {
    const res = await fetch(`${mock.url}/journal`, { headers: { Accept: 'application/json' } })
    expect(res.status).toBe(401)
    const pub = await fetch(`${mock.url}/login`)
    expect(pub.status).toBe(200)
  })
})
