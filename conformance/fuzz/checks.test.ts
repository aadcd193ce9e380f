/**
 * Each named check of the fuzzer, given a planted violation and its correct counterpart, over the operations of
 * the project's own documents: the violation fails exactly that check, the correct exchange passes it. (The live
 * run in conformance.test.ts shows the checks pass against the system; this file shows they are not vacuous.)
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { linkChecks } from './chains.js'
import type { CheckName, CheckResult } from './checks.js'
import type { Exchange } from './FuzzRun.js'
import { inputChecks, isValidationRefusal } from './inputChecks.js'
import { judgeRequest } from './judgeRequest.js'
import { addListedTools, mcpResultCheck, mcpToolsOf } from './mcpChecks.js'
import { loadOperations, type Operation } from './operations.js'
import { probeCheck } from './probes.js'
import type { FuzzRequest } from './requestArbitrary.js'
import { responseChecks } from './responseChecks.js'
import { x402HeaderChecks } from './x402Checks.js'

let ops: Map<string, Operation>
beforeAll(async () => {
  ops = new Map([...(await loadOperations('gateway')), ...(await loadOperations('modelserver'))].map((op) => [`${op.server} ${op.id}`, op]))
}, 60_000)
const op = (key: string) => ops.get(key)!

const failed = (results: CheckResult[], check: CheckName) => results.filter((r) => r.check === check && r.problem !== undefined)
const passed = (results: CheckResult[], check: CheckName) => results.some((r) => r.check === check && r.problem === undefined)
const json = (body: unknown, init: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json', ...init })
const request = (o: Operation, overrides: Partial<FuzzRequest> = {}): FuzzRequest => ({ operation: o.id, mutation: 'valid', method: o.method, path: o.path, headers: {}, ...overrides })
const answer = (status: number, text = '', headers = new Headers()) => ({ status, headers, text, ms: 1, sentPath: '/', retried: false })

describe('response checks (every response)', () => {
  const seen = (status: number, text: string, headers: Headers, path = '/api/version', ms = 5) => responseChecks({ server: 'modelserver', method: 'GET', path, status, headers, text, ms }, 1000)

  it('not_a_server_error: a 500 fails, a 502 the document lists passes', () => {
    expect(failed(seen(500, '{"error":"internal error"}', json({})), 'not_a_server_error')).toHaveLength(1)
    const pull = responseChecks({ server: 'modelserver', method: 'POST', path: '/api/pull', status: 502, headers: json({}), text: '{"error":"pull model manifest: registry unreachable"}', ms: 1 }, 1000)
    expect(passed(pull, 'not_a_server_error')).toBe(true)
    expect(passed(pull, 'status_code_conformance')).toBe(true)
  })

  it('status, content type, headers and schema: each fails on its own planted fault', () => {
    expect(failed(seen(418, '{"error":"x"}', json({})), 'status_code_conformance')).toHaveLength(1)
    expect(failed(seen(200, '<html></html>', new Headers({ 'content-type': 'text/html' })), 'content_type_conformance')).toHaveLength(1)
    expect(failed(seen(200, '{"version":"1"}', new Headers()), 'content_type_conformance')).toHaveLength(1)
    expect(failed(seen(200, '{"version":1}', json({})), 'response_schema_conformance')).toHaveLength(1)
    const good = seen(200, '{"version":"0.33.0"}', json({}))
    for (const check of ['status_code_conformance', 'content_type_conformance', 'response_headers_conformance', 'response_schema_conformance'] as const) expect(passed(good, check), check).toBe(true)
    const registry = responseChecks({ server: 'modelserver', method: 'POST', path: '/v2/library/x/blobs/uploads', status: 202, headers: new Headers(), text: '', ms: 1 }, 1000)
    expect(failed(registry, 'response_headers_conformance')[0]?.problem).toMatch(/required header Location is missing/)
  })

  it('no_server_path and max_response_time', () => {
    expect(failed(seen(404, '{"error":"model not found at /work/models/x"}', json({})), 'no_server_path')).toHaveLength(1)
    expect(failed(seen(200, '{"version":"0.33.0"}', json({}), '/api/version', 1500), 'max_response_time')[0]?.problem).toMatch(/1500 ms, over the 1000 ms limit/)
  })
})

describe('x402 headers', () => {
  const required = { x402Version: 2, error: null, resource: { url: 'http://gw/store', description: 'd', mimeType: 'application/octet-stream' }, accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '5012', asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', payTo: '0x52908400098527886E0F7030069857D2E4169EE7', maxTimeoutSeconds: 60, extra: {} }] }
  const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64')
  const check = (status: number, headers: Record<string, string>, body: unknown) => x402HeaderChecks({ status, headers: new Headers(headers), text: JSON.stringify(body) })

  it('PAYMENT-REQUIRED: base64 of a v2 PaymentRequired equal to the body passes; anything else fails', () => {
    expect(check(402, { 'payment-required': b64(required) }, required)).toEqual([{ check: 'x402_payment_required', problem: undefined }])
    expect(check(402, { 'payment-required': 'not base64!' }, required)[0]?.problem).toMatch(/not base64/)
    expect(check(402, { 'payment-required': b64({ ...required, accepts: [{ ...required.accepts[0], network: 'base' }] }) }, {})[0]?.problem).toMatch(/CAIP-2/)
    expect(check(402, { 'payment-required': b64({ ...required, x402Version: 3 }) }, {})[0]?.problem).toMatch(/not an x402 v2 PaymentRequired/)
    expect(check(402, { 'payment-required': b64(required) }, { ...required, accepts: [] })[0]?.problem).toMatch(/differs from the JSON body in accepts/)
  })

  it('PAYMENT-RESPONSE: a successful v2 SettleResponse on a 2xx passes; success false or a bad network fails', () => {
    const settled = { success: true, transaction: '0xabc', network: 'eip155:8453', payer: '0x1' }
    expect(check(200, { 'payment-response': b64(settled) }, {})).toEqual([{ check: 'x402_payment_response', problem: undefined }])
    expect(check(200, { 'payment-response': b64({ ...settled, success: false }) }, {})[0]?.problem).toMatch(/success false on a 200/)
    expect(check(200, { 'payment-response': b64({ ...settled, network: 'base mainnet' }) }, {})[0]?.problem).toMatch(/SettleResponse/)
  })
})

describe('request judgement and the input checks', () => {
  it('judges parameters, bodies and media types against the document', () => {
    const preflight = op('gateway getCabinetPreflight')
    expect(judgeRequest(preflight, request(preflight, { path: '/admin/cabinet/ACME/preflight' })).conforms).toBe(true)
    expect(judgeRequest(preflight, request(preflight, { path: '/admin/cabinet/..%2F/preflight' })).problems.join()).toMatch(/path co/)
    const show = op('modelserver showModel')
    const body = (text: string, type = 'application/json') => request(show, { headers: { 'content-type': type }, body: { text } })
    expect(judgeRequest(show, body('{"model":"svc-tiny-chat"}')).conforms).toBe(true)
    // the model server reads JSON whatever the Content-Type: documented under */*
    expect(judgeRequest(show, body('{"model":"svc-tiny-chat"}', 'text/plain')).conforms).toBe(true)
    expect(judgeRequest(show, body('{}')).problems.join()).toMatch(/required property/)
    expect(judgeRequest(show, body('{"model":')).problems).toContain('the body is not JSON')
    const quote = op('gateway quoteStore')
    expect(judgeRequest(quote, request(quote, { path: '/store/quote?bytes=0' })).broken).toContain('query:bytes/minimum')
    expect(judgeRequest(quote, request(quote, { path: '/store/quote?bytes=10' })).reached).toContain('query:bytes/minimum')
  })

  it('judges a JSON body in the charset its Content-Type names where the server honours it (the gateway), as UTF-8 where it reads JSON whatever the label (the model server)', () => {
    // fetch writes the text as UTF-8 bytes: labelled utf-16 they are other text to the gateway's reader
    const challenge = op('gateway createLoginChallenge')
    const labelled = (charset: string) => judgeRequest(challenge, request(challenge, { headers: { 'content-type': `application/json; charset=${charset}` }, body: { text: '{"wallet":"0xBaC63c6bBDBac332e3628beA1fbDeEda208fe11d"}' } }))
    expect(labelled('utf-8').conforms).toBe(true)
    expect(labelled('utf-16').problems).toEqual(['the body is not JSON'])
    expect(labelled('latin-2').problems.join()).toMatch(/cannot be read in the charset/)
    const show = op('modelserver showModel')
    expect(judgeRequest(show, request(show, { headers: { 'content-type': 'application/json; charset=utf-16' }, body: { text: '{"model":"svc-tiny-chat"}' } })).conforms).toBe(true)
  })

  it('negative_data_rejection fails a 2xx to a refused request; positive_data_acceptance fails the validation refusal of an accepted one', () => {
    const show = op('modelserver showModel')
    const refused = judgeRequest(show, request(show, { headers: { 'content-type': 'application/json' }, body: { text: '{}' } }))
    const accepted = judgeRequest(show, request(show, { headers: { 'content-type': 'application/json' }, body: { text: '{"model":"x"}' } }))
    const run = (judged: typeof refused, status: number, text: string) => inputChecks({ op: show, tier: 'none', judged, status, text, loopback: true })
    expect(failed(run(refused, 200, '{}'), 'negative_data_rejection')).toHaveLength(1)
    expect(passed(run(refused, 400, '{"error":"model is required"}'), 'negative_data_rejection')).toBe(true)
    expect(failed(run(accepted, 400, '{"error":"body /model: must NOT have fewer than 1 characters"}'), 'positive_data_acceptance')).toHaveLength(1)
    expect(passed(run(accepted, 404, '{"error":"model \'x\' not found"}'), 'positive_data_acceptance')).toBe(true)
    expect(isValidationRefusal('gateway', 400, '{"error":"invalid_request","message":"request does not match the API description: body / must be object"}')).toBe(true)
    expect(isValidationRefusal('gateway', 400, '{"error":"bad_signature","message":"signature does not recover"}')).toBe(false)
    expect(isValidationRefusal('gateway', 415, '')).toBe(true)
  })

  it('ignored_auth fails a 2xx without credentials where every alternative needs one, unless the document exempts loopback', () => {
    const journal = op('gateway getMyJournal')
    const judged = judgeRequest(journal, request(journal))
    expect(failed(inputChecks({ op: journal, tier: 'none', judged, status: 200, text: '{}', loopback: true }), 'ignored_auth')).toHaveLength(1)
    expect(failed(inputChecks({ op: journal, tier: 'garbage', judged, status: 200, text: '{}', loopback: true }), 'ignored_auth')).toHaveLength(1)
    expect(passed(inputChecks({ op: journal, tier: 'none', judged, status: 401, text: '{}', loopback: true }), 'ignored_auth')).toBe(true)
    const metrics = op('gateway getMetrics')
    expect(metrics.loopbackWithoutCredentials).toBe(true)
    expect(inputChecks({ op: metrics, tier: 'none', judged: judgeRequest(metrics, request(metrics)), status: 200, text: '', loopback: true }).some((r) => r.check === 'ignored_auth')).toBe(false)
    expect(failed(inputChecks({ op: metrics, tier: 'none', judged: judgeRequest(metrics, request(metrics)), status: 200, text: '', loopback: false }), 'ignored_auth')).toHaveLength(1)
  })
})

describe('probes', () => {
  const probe = { check: 'unsupported_method' as const, allowed: ['GET'], request: { method: 'DELETE', path: '/api/version' } }
  it('unsupported_method: 405 with an Allow naming the documented methods passes; no Allow, a short one or another status fails', () => {
    expect(probeCheck(probe, 405, new Headers({ allow: 'GET, HEAD' })).problem).toBeUndefined()
    expect(probeCheck(probe, 405, new Headers()).problem).toMatch(/without an Allow header/)
    expect(probeCheck({ ...probe, allowed: ['GET', 'POST'] }, 405, new Headers({ allow: 'GET' })).problem).toMatch(/POST missing/)
    expect(probeCheck(probe, 405, new Headers({ allow: 'GET, DELETE' })).problem).toMatch(/names the refused DELETE/)
    expect(probeCheck(probe, 404, new Headers()).problem).toMatch(/expected 405/)
  })
  it('missing_required_header: a 4xx passes, a 200 fails', () => {
    const missing = { check: 'missing_required_header' as const, header: 'X-Session-Token', request: { method: 'GET', path: '/users/session/validate' } }
    expect(probeCheck(missing, 400, new Headers()).problem).toBeUndefined()
    expect(probeCheck(missing, 200, new Headers()).problem).toMatch(/without the required header X-Session-Token/)
  })
})

describe('link checks (stateful)', () => {
  const x = (o: Operation, method: string, status: number, contentType = 'application/json', text = '{}'): Exchange => ({ op: o, tier: 'none', request: request(o, { method }), answer: answer(status, text, new Headers({ 'content-type': contentType })) })
  it('use_after_free: after a successful DELETE its link must answer 404 or 410; after a logout (x-use-after-free) 401 too', () => {
    const del = op('modelserver deleteModel')
    const show = op('modelserver showModel')
    const link = del.links.get('200')!.get('showDeleted')!
    expect(linkChecks(x(del, 'DELETE', 200), link, x(show, 'POST', 200))[0]?.problem).toMatch(/still answers 200/)
    expect(linkChecks(x(del, 'DELETE', 200), link, x(show, 'POST', 404))).toEqual([{ check: 'use_after_free' }])
    const logout = op('gateway logout')
    const validate = op('gateway validateSession')
    const revoked = logout.links.get('204')!.get('validateAfterLogout')!
    expect(revoked['x-use-after-free']).toBe(true)
    expect(linkChecks(x(logout, 'POST', 204), revoked, x(validate, 'GET', 401))).toEqual([{ check: 'use_after_free' }])
    expect(linkChecks(x(logout, 'POST', 204), revoked, x(validate, 'GET', 200))[0]?.problem).toMatch(/still answers 200/)
  })
  it('ensure_resource_availability: a link from a success must not answer 404; a stream that ended in an error is no success', () => {
    const pull = op('modelserver pullModel')
    const show = op('modelserver showModel')
    const link = pull.links.get('200')!.get('show')!
    expect(linkChecks(x(pull, 'POST', 200), link, x(show, 'POST', 404))[0]?.problem).toMatch(/named it, but POST/)
    expect(linkChecks(x(pull, 'POST', 200), link, x(show, 'POST', 200))).toEqual([{ check: 'ensure_resource_availability' }])
    const failedPull = x(pull, 'POST', 200, 'application/x-ndjson', '{"status":"pulling manifest"}\n{"error":"registry unreachable"}\n')
    expect(linkChecks(failedPull, link, x(show, 'POST', 404))).toEqual([])
  })
})

describe('MCP tool results', () => {
  it('a result whose structuredContent misses the tool’s outputSchema fails; a documented output passes', () => {
    const mcp = op('gateway mcpCall')
    const tools = mcpToolsOf(mcp)
    expect([...tools.keys()]).toContain('quote_storage')
    addListedTools(tools, { result: { tools: [{ name: 'list_models', outputSchema: { type: 'object', required: ['object', 'data'] } }] } })
    const call = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_models', arguments: {} } })
    const result = (structuredContent: unknown, isError = false) => JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent, isError } })
    expect(mcpResultCheck(tools, undefined, call, result({ object: 'list', data: [] }))).toEqual({ check: 'mcp_tool_result', problem: undefined })
    expect(mcpResultCheck(tools, undefined, call, result({ data: [] }))?.problem).toMatch(/outputSchema of list_models/)
    expect(mcpResultCheck(tools, undefined, call, JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: 'text', structuredContent: { object: 'list', data: [] } } }))?.problem).toMatch(/content blocks/)
    expect(mcpResultCheck(tools, { type: 'object', required: ['error', 'message'] }, call, result({ error: 'x', message: 'y' }, true))).toEqual({ check: 'mcp_tool_result', problem: undefined })
  })
})
