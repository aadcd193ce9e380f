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

const gateway = loadDoc('gateway')
const gatewayOps = operations(gateway)
const key = (method: string, p: string) => `${method.toUpperCase()} ${p}`

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

  it('every other operation requires exactly the session token', () => {
    for (const o of gatewayOps.filter((x) => requiresSession(gateway, x.op))) {
      expect(o.op.security, `${o.operationId} declares its security explicitly`).toEqual([{ sessionToken: [] }])
    }
  })

  it('public operations declare `security: []`, shadow ones the bearer, /store the payment', () => {
    for (const o of gatewayOps.filter((x) => !requiresSession(gateway, x.op))) {
      const sec = JSON.stringify(o.op.security)
      expect(['[]', '[{"overlordBearer":[]}]', '[{},{"x402Payment":[]}]'], `${o.operationId}: ${sec}`).toContain(sec)
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

  it('session-gated operations document the gate: 401 AuthRequired, and 302 on HTML pages', () => {
    for (const o of gatewayOps.filter((x) => requiresSession(gateway, x.op))) {
      const responses = o.op.responses as Record<string, unknown>
      expect(responses['401'], `${o.operationId} 401`).toEqual({ $ref: '#/components/responses/AuthRequired' })
      const ok = deref(gateway, responses['200'] as never, '').value
      const html = isObject(ok) && isObject(ok.content) && 'text/html' in ok.content
      if (html) expect(responses['302'], `${o.operationId} 302`).toEqual({ $ref: '#/components/responses/GateRedirect' })
    }
  })

  it('every operation documents the rate limit (429 with Retry-After)', () => {
    for (const o of gatewayOps) {
      const r = deref(gateway, (o.op.responses as Record<string, never>)['429'], '').value
      expect(isObject(r) && isObject(r.headers) && 'Retry-After' in r.headers, `${o.operationId} 429`).toBe(true)
    }
  })

  it('cost endpoints document 402 quota_exceeded', () => {
    for (const id of ['createCoordinatorTask', 'evolveAgent', 'conveneBoardroom', 'llmChat', 'llmCompletion']) {
      const o = gatewayOps.find((x) => x.operationId === id)
      expect((o?.op.responses as Record<string, unknown>)['402'], id).toEqual({ $ref: '#/components/responses/QuotaExceeded' })
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
