import { describe, expect, it } from 'vitest'
import { operationIds as generatedGatewayIds } from '../../generated/gateway/operationIds.js'
import { readOperationIds } from '../../scripts/generate.js'
import {
  gatewayDesignOperationIds,
  gatewaySeedOperations,
  gatewaySeedPublicExactPaths,
  gatewaySeedPublicPrefixes,
  gatewayUngatedOperations,
  modelServerSeedOperations,
  modelServerSeedSamplePaths,
} from './seedOperations.js'
import {
  createValidator,
  deref,
  documentExists,
  isObject,
  loadDoc,
  operations,
  repoRoot,
  requiresSession,
} from './specHelpers.js'
import path from 'node:path'
import { clearedSessionCookie, sessionCookie } from '../../src/handlers/core/session.js'
import { formatPriceUsd } from '../../src/x402/price.js'
import { requestBindingNote, requestBindingNotes } from '../../src/x402/requirements.js'
import type { JsonObject } from './specHelpers.js'

const gateway = loadDoc('gateway')
const gatewayOps = operations(gateway)
const key = (method: string, p: string) => `${method.toUpperCase()} ${p}`

/**
 * The response a refusal of the gateway's own is documented with on an operation: the shared one, or on a route of
 * another API family (its 401 declares `x-error-shape`) the family's (`OpenAiRefused`, `AnthropicRefused`).
 */
function refusalIn(op: Record<string, unknown>, shared: string): string {
  const unauthorized = (op.responses as Record<string, { $ref?: string }>)['401']?.$ref ?? ''
  const family = unauthorized.endsWith('/OpenAiAuthRequired') ? 'OpenAi' : unauthorized.endsWith('/AnthropicAuthRequired') ? 'Anthropic' : undefined
  return family ? `${family}Refused` : shared
}

describe('gateway document covers seed 000', () => {
  const present = new Set(gatewayOps.map((o) => key(o.method, o.path)))
  it.each(gatewaySeedOperations.map((s) => [key(s.method, s.path), s.seed]))('%s  (%s)', (k) => {
    expect(present.has(k), `${k} missing from openapi/gateway.yaml`).toBe(true)
  })

  it('has exactly the operationIds fixed in docs/design.md', () => {
    expect(gatewayOps.map((o) => o.operationId).sort()).toEqual([...gatewayDesignOperationIds].sort())
  })

  it('generated/gateway/operationIds.ts lists the same ids, sorted', () => {
    const fromYaml = readOperationIds(path.join(repoRoot, 'openapi/gateway.yaml'))
    expect([...generatedGatewayIds]).toEqual(fromYaml)
    expect(fromYaml).toEqual([...gatewayDesignOperationIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
  })
})

describe('gateway public set is readable from the document', () => {
  it('the operations not requiring a session are exactly the designed public set', () => {
    const ungated = gatewayOps.filter((o) => !requiresSession(gateway, o.op)).map((o) => key(o.method, o.path))
    expect(ungated.sort()).toEqual([...gatewayUngatedOperations].sort())
  })

  it('every other operation requires exactly the session: the header, or on GET/HEAD also the browser cookie, plus the overlord bearer where it only reads (seed §4.2 with §5.2: the bearer reads); /llm/v1 the llmBearer', () => {
    for (const o of gatewayOps.filter((x) => requiresSession(gateway, x.op))) {
      const safe = o.method === 'get' || o.method === 'head'
      // /llm/v1 takes no cookie (a bearer or the header only); every session GET does, /llm/keys included.
      // A session operation that writes, spends or mints (every non-GET one) takes the session alone: a stolen
      // bearer reads, nothing more.
      // /llm/v1/responses and /llm/v1/messages also take the Anthropic SDK's `x-api-key`.
      const expected = o.path.startsWith('/llm/v1/')
        ? ['/llm/v1/responses', '/llm/v1/messages'].includes(o.path)
          ? [{ sessionToken: [] }, { llmBearer: [] }, { llmApiKey: [] }]
          : [{ sessionToken: [] }, { llmBearer: [] }]
        : safe
          ? [{ sessionToken: [] }, { sessionCookie: [] }, { overlordBearer: [] }]
          : [{ sessionToken: [] }]
      expect(o.op.security, `${o.operationId} declares its security explicitly`).toEqual(expected)
    }
    for (const id of ['getDocs', 'listAgents', 'evolveAgent', 'llmChat', 'createLlmKey', 'openAiChatCompletions', 'openAiModels', 'coreAgentInteract', 'logout']) {
      expect(requiresSession(gateway, gatewayOps.find((o) => o.operationId === id)!.op), `${id} gated`).toBe(true)
    }
    const schemes = (gateway.components as JsonObject).securitySchemes as JsonObject
    expect(schemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'svc_session' })
  })

  it('login sets the session cookie and logout clears it (Set-Cookie documented)', () => {
    const responseOf = (id: string, status: string) => {
      const o = gatewayOps.find((x) => x.operationId === id)!
      return deref(gateway, (o.op.responses as JsonObject)[status], '').value as JsonObject
    }
    const headerOf = (r: JsonObject) => deref(gateway, (r.headers as JsonObject)['Set-Cookie'], '').value as JsonObject
    const set = headerOf(responseOf('registerWithSignature', '200'))
    const cleared = headerOf(responseOf('logout', '204'))
    expect(set.required).toBe(true)
    expect(cleared.required).toBe(true)
    const pattern = (h: JsonObject) => new RegExp(String((h.schema as JsonObject).pattern))
    // the exact strings src/handlers/core/session.ts builds
    expect(sessionCookie('st_kX3v9QeP2mZ7rT1yB8nD4fH6jL0sW5aC9gU2oI7eR1t', 86400, false)).toMatch(pattern(set))
    expect(sessionCookie('st_kX3v9QeP2mZ7rT1yB8nD4fH6jL0sW5aC9gU2oI7eR1t', 86400, true)).toMatch(pattern(set))
    expect(clearedSessionCookie(true)).toMatch(pattern(cleared))
    expect(clearedSessionCookie(false)).toMatch(pattern(cleared))
  })

  it('public operations declare `security: []`, shadow ones the bearer, /store the payment', () => {
    for (const o of gatewayOps.filter((x) => !requiresSession(gateway, x.op))) {
      const sec = JSON.stringify(o.op.security)
      // /metrics: loopback or its token; /mcp: anonymous, a session or an /llm key per tool
      expect(['[]', '[{"overlordBearer":[]}]', '[{},{"x402Payment":[]}]', '[{"metricsBearer":[]}]', '[{},{"sessionToken":[]},{"llmBearer":[]}]'], `${o.operationId}: ${sec}`).toContain(sec)
    }
    const store = gatewayOps.find((o) => o.operationId === 'storeFile')
    expect(store?.op.security).toEqual([{}, { x402Payment: [] }])
  })

  it('seed prefix families and exact static paths are listed as extensions', () => {
    expect(gateway['x-public-prefixes']).toEqual(expect.arrayContaining([...gatewaySeedPublicPrefixes]))
    expect(gateway['x-public-exact-paths']).toEqual(expect.arrayContaining([...gatewaySeedPublicExactPaths]))
    for (const list of ['x-public-prefixes', 'x-pre-rollout-public-prefixes'] as const) {
      for (const p of gateway[list] as string[]) expect(p, `${list}: ${p}`).toMatch(/^\/[^\s]*\/$/)
    }
    for (const p of gateway['x-pre-rollout-public-paths'] as string[]) expect(p).toMatch(/^\/[^\s]*[^/]$/)
  })

  it('the pre-rollout list never opens a cost endpoint, an admin route or logout', () => {
    const exact = new Set(gateway['x-pre-rollout-public-paths'] as string[])
    const prefixes = gateway['x-pre-rollout-public-prefixes'] as string[]
    const opened = (p: string) => exact.has(p) || prefixes.some((x) => p.startsWith(x))
    for (const p of ['/coordinator/tasks', '/agents/ceo/evolve', '/boardroom/convene', '/llm/chat', '/llm/completion', '/users/logout', '/api/monitoring/inbound', '/marketplace/agent/call']) {
      expect(opened(p), p).toBe(false)
    }
    for (const p of ['/public', '/journal', '/health', '/docs', '/agents', '/insight/catalogue/recent']) {
      expect(opened(p), p).toBe(true)
    }
  })

  it('every session-gated operation documents the gate: 302 GateRedirect (HTML requests) and 401 AuthRequired (or its OpenAI / Anthropic shape, which keeps its fields)', () => {
    const gated = gatewayOps.filter((x) => requiresSession(gateway, x.op))
    expect(gated.length).toBeGreaterThanOrEqual(25)
    const shapes = ['AuthRequired', 'OpenAiAuthRequired', 'AnthropicAuthRequired'].map((name) => `#/components/responses/${name}`)
    for (const ref of shapes) {
      const response = deref(gateway, { $ref: ref }, '').value as JsonObject
      const schema = deref(gateway, ((response.content as JsonObject)['application/json'] as JsonObject).schema as JsonObject, '').value as JsonObject
      expect(schema.required, ref).toEqual(expect.arrayContaining(['code', 'from']))
      expect((schema.properties as JsonObject).code, ref).toEqual({ type: 'string', const: 'auth_required' })
    }
    for (const o of gated) {
      const responses = o.op.responses as Record<string, unknown>
      const ref = (responses['401'] as { $ref?: string } | undefined)?.$ref
      expect(shapes, `${o.operationId} 401`).toContain(ref)
      // the family's shape only on its own routes
      if (ref !== shapes[0]) expect(o.path, o.operationId).toMatch(/^\/llm\/v1\//)
      // the gate redirects every gated HTML request, whatever the operation answers otherwise
      expect(responses['302'], `${o.operationId} 302`).toEqual({ $ref: '#/components/responses/GateRedirect' })
    }
    const redirect = deref(gateway, { $ref: '#/components/responses/GateRedirect' }, '').value as JsonObject
    expect((redirect.headers as JsonObject).Location).toMatchObject({ required: true })
  })

  it('GET /health is public (liveness only, designed and explained); /health/detailed stays gated', () => {
    const health = gatewayOps.find((o) => o.operationId === 'getHealth')!
    expect(health.op.security).toEqual([])
    expect(health.op['x-designed']).toBe(true)
    expect(String(health.op.description)).toMatch(/liveness only/i)
    expect(Object.keys(health.op.responses as JsonObject)).not.toContain('401')
    const detailed = gatewayOps.find((o) => o.operationId === 'getHealthDetailed')!
    expect(requiresSession(gateway, detailed.op)).toBe(true)
  })

  it('JSON-body operations document the router\'s 413 and 415 (bodies of createOpenApiRouter)', () => {
    const jsonBody = gatewayOps.filter((o) => {
      const body = deref(gateway, o.op.requestBody as never, '').value
      return isObject(body) && isObject(body.content) && 'application/json' in body.content
    })
    expect(jsonBody.length).toBeGreaterThan(15)
    for (const o of jsonBody) {
      const responses = o.op.responses as Record<string, unknown>
      expect(responses['413'], `${o.operationId} 413`).toEqual({ $ref: `#/components/responses/${refusalIn(o.op, 'PayloadTooLarge')}` })
      expect(responses['415'], `${o.operationId} 415`).toEqual({ $ref: `#/components/responses/${refusalIn(o.op, 'UnsupportedMediaType')}` })
    }
    const example = (name: string, key: string) =>
      ((((deref(gateway, { $ref: `#/components/responses/${name}` }, '').value as JsonObject).content as JsonObject)['application/json'] as JsonObject).examples as JsonObject)[key] as JsonObject
    expect(example('PayloadTooLarge', 'payload_too_large').value).toEqual({ error: 'payload_too_large', message: 'The request body is too large.' })
    expect((example('UnsupportedMediaType', 'unsupported_media_type').value as JsonObject).error).toBe('unsupported_media_type')
  })

  it('the Algorand note\'s price_usd text is documented exactly as src/x402 writes and accepts it', () => {
    const schemas = (gateway.components as JsonObject).schemas as JsonObject
    const description = String((schemas.AlgorandExtra as JsonObject).description)
    const pairs = [...description.matchAll(/`(\d+)`\s+→\s+`(\d+\.\d+)`/g)].map((m) => [m[1]!, m[2]!] as const)
    expect(pairs.length).toBeGreaterThanOrEqual(4)
    for (const [atomic, text] of pairs) expect(formatPriceUsd(BigInt(atomic)), atomic).toBe(text)
    // also accepted: six decimals, and a whole dollar without fraction — and nothing else
    const note = (t: string) => Buffer.from(requestBindingNote('http://gw.test/store', 'ab'.repeat(32), 11n, t)).toString('hex')
    const accepted = (atomic: bigint) => requestBindingNotes('http://gw.test/store', 'ab'.repeat(32), 11n, atomic).map((n) => Buffer.from(n).toString('hex'))
    expect(description).toContain('`0.005000`')
    expect(accepted(5000n).sort()).toEqual([note('0.005'), note('0.005000')].sort())
    expect(accepted(1_000_000n).sort()).toEqual([note('1.0'), note('1.000000'), note('1')].sort())
  })

  it('/store documents 415, 503 storage_not_configured / too_many_uploads (with Retry-After) / upstream_credit_insufficient and the designed 400 codes', () => {
    const store = gatewayOps.find((o) => o.operationId === 'storeFile')!
    const responses = store.op.responses as JsonObject
    expect(responses['415']).toEqual({ $ref: '#/components/responses/UnsupportedMediaType' })
    const examplesOf = (status: string) => (((responses[status] as JsonObject).content as JsonObject)['application/json'] as JsonObject).examples as JsonObject
    expect(Object.keys(examplesOf('503')).sort()).toEqual(['storage_not_configured', 'too_many_uploads', 'upstream_credit_insufficient'])
    expect(((responses['503'] as JsonObject).headers as JsonObject)['Retry-After']).toMatchObject({ required: false })
    expect(Object.keys(examplesOf('400'))).toEqual(expect.arrayContaining(['invalid_multipart', 'invalid_tag', 'invalid_payment_header', 'empty_body', 'unsupported_network']))
    // no pattern on the payment header: the x402 decoder, not request validation, answers a malformed one
    const header = (schemas: JsonObject) => schemas.PaymentSignatureHeader as JsonObject
    expect(header((gateway.components as JsonObject).schemas as JsonObject)).not.toHaveProperty('pattern')
    expect(header((gateway.components as JsonObject).schemas as JsonObject)).not.toHaveProperty('allOf')
  })

  it('the shadow challenge request takes any scope string, so the handler answers invalid_scope', () => {
    const schemas = (gateway.components as JsonObject).schemas as JsonObject
    const scope = ((schemas.ShadowChallengeRequest as JsonObject).properties as JsonObject).scope as JsonObject
    expect(scope.type).toBe('string')
    expect(scope).not.toHaveProperty('enum')
    expect(scope).not.toHaveProperty('$ref')
    expect(scope.examples).toEqual(['auth', 'cabinet.provision', 'cabinet.clear', 'vault.sign', 'release.key'])
  })

  it('operations that call the model server document its refusals (400) and its failures (502)', () => {
    const refusals = deref(gateway, { $ref: '#/components/responses/ModelBadRequest' }, '').value as JsonObject
    const examples = ((refusals.content as JsonObject)['application/json'] as JsonObject).examples as JsonObject
    expect(Object.keys(examples).sort()).toEqual(['invalid_payment_header', 'invalid_request', 'model_not_found', 'model_request_invalid'])
    for (const id of ['callMarketplaceAgent', 'ingestModelServerPrompt', 'evolveAgent', 'createCoordinatorTask', 'conveneBoardroom', 'llmChat', 'llmCompletion']) {
      const responses = gatewayOps.find((o) => o.operationId === id)!.op.responses as JsonObject
      expect(responses['400'], `${id} 400`).toEqual({ $ref: '#/components/responses/ModelBadRequest' })
      expect(responses['502'], `${id} 502`).toEqual({ $ref: '#/components/responses/ModelServerUnavailable' })
    }
  })

  it('every operation documents the rate limit (429 with Retry-After)', () => {
    for (const o of gatewayOps) {
      const r = deref(gateway, (o.op.responses as Record<string, never>)['429'], '').value
      expect(isObject(r) && isObject(r.headers) && 'Retry-After' in r.headers, `${o.operationId} 429`).toBe(true)
    }
  })

  it('cost endpoints document 402 quota_exceeded payable with x402 (PAYMENT-SIGNATURE, 409 on a reused payload)', () => {
    const costOps = ['createCoordinatorTask', 'evolveAgent', 'conveneBoardroom', 'llmChat', 'llmCompletion', 'llmGenerate', 'openAiChatCompletions', 'openAiCompletions', 'openAiEmbeddings', 'coreAgentInteract']
    for (const id of costOps) {
      const o = gatewayOps.find((x) => x.operationId === id)
      const responses = o?.op.responses as Record<string, unknown>
      expect(responses['402'], id).toEqual({ $ref: '#/components/responses/CostPaymentRequired' })
      expect(responses['409'], id).toEqual({ $ref: `#/components/responses/${refusalIn(o!.op, 'PaymentReplayed')}` })
      expect(o?.op.parameters, id).toEqual(expect.arrayContaining([{ $ref: '#/components/parameters/PaymentSignature' }, { $ref: '#/components/parameters/XPayment' }]))
    }
  })

  it('designed operations and schemas say so in their description', () => {
    const walk = (v: unknown, at: string, out: string[]) => {
      if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${at}/${i}`, out))
      else if (isObject(v)) {
        if (v['x-designed'] === true) {
          const d = typeof v.description === 'string' ? v.description : ''
          if (!/designed/i.test(d)) out.push(at)
        }
        for (const [k, x] of Object.entries(v)) walk(x, `${at}/${k}`, out)
      }
    }
    const missing: string[] = []
    walk(gateway, '#', missing)
    expect(missing).toEqual([])
  })
})

describe.skipIf(!documentExists('modelserver'))('model-server document covers seed 001', () => {
  const doc = documentExists('modelserver') ? loadDoc('modelserver') : {}
  const ops = operations(doc)
  const present = new Set(ops.map((o) => key(o.method, o.path)))
  it.each(modelServerSeedOperations.map((s) => [key(s.method, s.path), s.seed]))('%s  (%s)', (k) => {
    expect(present.has(k), `${k} missing from openapi/modelserver.yaml`).toBe(true)
  })

  it('seed-style concrete paths match the templates and their parameter schemas', () => {
    const { check } = createValidator(doc, 'modelserver.yaml')
    for (const [template, sample] of Object.entries(modelServerSeedSamplePaths)) {
      const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
      const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`)
      const m = sample.match(re)
      expect(m, `${sample} ~ ${template}`).not.toBeNull()
      for (const o of ops.filter((x) => x.path === template)) {
        const params = [...((doc.paths as Record<string, Record<string, unknown>>)[template]!.parameters as unknown[] ?? []), ...((o.op.parameters as unknown[]) ?? [])]
        names.forEach((name, i) => {
          const idx = params.findIndex((p) => {
            const v = deref(doc, p as never, '').value
            return isObject(v) && v.name === name && v.in === 'path'
          })
          expect(idx, `${o.operationId}: path parameter ${name}`).toBeGreaterThanOrEqual(0)
          const raw = params[idx] as Record<string, unknown>
          const where = typeof raw.$ref === 'string'
            ? deref(doc, raw as never, '').pointer
            : (o.op.parameters as unknown[] | undefined)?.includes(raw)
              ? `${o.pointer}/parameters/${(o.op.parameters as unknown[]).indexOf(raw)}`
              : `#/paths/${template.replace(/~/g, '~0').replace(/\//g, '~1')}/parameters/${params.indexOf(raw)}`
          expect(check(`${where}/schema`, decodeURIComponent(m![i + 1]!)), `${o.operationId} ${name}`).toEqual([])
        })
      }
    }
  })
})
