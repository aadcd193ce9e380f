import { AuthRequiredError } from '../gate/AuthRequiredError.js'
import { MetricsTokenRequiredError, RateLimitedError } from '../pipeline/refusals.js'
import { PaymentRequiredError } from '../x402/PaymentRequiredError.js'
import { describe, expect, it } from 'vitest'
import { SHADOW_ERROR_CODES, ShadowError } from '../overlord/ShadowError.js'
import { BaseError } from '../shared/errors/BaseError.js'
import { MethodNotAllowedError, renderRouterRefusal, routerRefusalRows } from '../shared/http/index.js'
import { PAYMENT_REFUSAL_CODES } from '../storage/paymentRefusals.js'
import { coreErrorRows, ErrorCatalogue } from './errorCatalogue.js'
import type { HttpPlugin } from './HttpPlugin.js'
import { catalogueOf, domainPlugins, gatewayCatalogue } from './plugins.js'
import { shadowErrorRows } from './shadow/errorRows.js'
import { storagePlugin } from './storage/plugin.js'
import { storageErrorRows } from './storage/errorRows.js'

describe('paid-storage rows of the error catalogue', () => {
  it('lists every storage and x402 code with its status; client mistakes are never 5xx', () => {
    for (const [code, row] of Object.entries(storageErrorRows)) {
      expect(gatewayCatalogue.statusOfCode(code), code).toBe(row.status)
      if (!['storage_upstream_failed', 'facilitator_unavailable', 'settlement_pending', 'ledger_node_unavailable', 'storage_not_configured', 'upstream_credit_insufficient', 'too_many_uploads'].includes(code)) expect(row.status).toBeLessThan(500)
    }
  })

  it('answers 402 exactly for the codes storage treats as a refused payment (requirements sent again)', () => {
    const answered402 = Object.entries(storageErrorRows).filter(([, row]) => row.status === 402).map(([code]) => code)
    expect(new Set(answered402)).toEqual(PAYMENT_REFUSAL_CODES)
  })
})

describe("the router's refusals in the gateway's catalogue", () => {
  it('gives every refusal of the router its status and renders it as the router would', () => {
    for (const [code, row] of Object.entries(routerRefusalRows)) expect(gatewayCatalogue.statusOfCode(code), code).toBe(row.status)
    const refused = new MethodNotAllowedError('PATCH', '/health', ['GET', 'HEAD'])
    expect(gatewayCatalogue.toResult(refused)).toEqual(renderRouterRefusal(refused))
    expect(gatewayCatalogue.toResult(refused)).toMatchObject({ status: 405, headers: { Allow: 'GET, HEAD' }, body: { error: 'method_not_allowed' } })
  })
})

describe('the gateway error table (one mapping for every domain)', () => {
  it('maps every shadow-tier code; the error itself carries no status', () => {
    for (const code of SHADOW_ERROR_CODES) expect(gatewayCatalogue.statusOfCode(code), code).toBe(shadowErrorRows[code].status)
    const sealed = new ShadowError('vault_locked', 'The vault is sealed.')
    expect('status' in sealed).toBe(false)
    // the plain body is the document's `Error` (what a refusal outside any operation is checked against)
    expect(gatewayCatalogue.toResult(sealed)).toEqual({ status: 423, body: { error: 'vault_locked', message: 'The vault is sealed.' }, component: 'Error' })
  })

  it("renders an error's own answer: its route's body and its headers, with the catalogue's status", () => {
    const denied = new AuthRequiredError({ body: { code: 'auth_required', from: '/agents' }, component: 'AuthRequired' })
    expect(gatewayCatalogue.toResult(denied)).toEqual({ status: 401, body: { code: 'auth_required', from: '/agents' }, component: 'AuthRequired' })
    const metrics = gatewayCatalogue.toResult(new MetricsTokenRequiredError('send the token'))
    expect(metrics).toMatchObject({ status: 401, body: { error: 'metrics_token_required', message: 'send the token' }, component: 'Error' })
    expect(metrics?.headers).toEqual({ 'WWW-Authenticate': 'Bearer realm="metrics"' })
    // a 402 keeps its PAYMENT-REQUIRED and adds what it carries (a refund's refusal is never cached)
    const refund = new PaymentRequiredError({ version: 2, resource: { url: 'http://gw.test/x402/batch-settlement/refund', description: 'a refund', mimeType: 'application/json' }, accepts: [], error: 'payment_required' }, undefined, { 'Cache-Control': 'no-store' })
    const rendered = gatewayCatalogue.toResult(refund)
    expect(rendered?.status).toBe(402)
    expect(Object.keys(rendered?.headers ?? {}).sort()).toEqual(['Cache-Control', 'PAYMENT-REQUIRED'])
    expect(rendered?.headers?.['Cache-Control']).toBe('no-store')
    expect(gatewayCatalogue.toResult(new RateLimitedError(7))).toEqual({
      status: 429,
      body: { error: 'rate_limited', message: 'too many requests; retry after 7 s', details: { retry_after_s: 7 } },
      component: 'Error',
      headers: { 'Retry-After': '7' },
    })
  })

  it('leaves an unlisted code (even one named like an Object property) to the 500 path', () => {
    for (const code of ['no_such_code', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(gatewayCatalogue.toResult(new BaseError(code, 'x')), code).toBeUndefined()
      expect(gatewayCatalogue.statusOf(new BaseError(code, 'x')), code).toBe(500)
    }
  })
})

describe('the catalogue composed from the plug-ins', () => {
  it('is the union of the core rows and every listed plug-in rows, nothing else', () => {
    const expected = new Map<string, number>(Object.entries(coreErrorRows).map(([code, row]) => [code, row.status]))
    for (const plugin of domainPlugins) for (const [code, row] of Object.entries(plugin.errorRows)) expected.set(code, row.status)
    for (const [code, status] of expected) expect(gatewayCatalogue.statusOfCode(code), code).toBe(status)
    expect(gatewayCatalogue.statusOfCode('no_such_code')).toBeUndefined()
  })

  it('keeps a left-out plug-in rows: its notBuilt refusal still answers its status', () => {
    const withoutStorage = catalogueOf(domainPlugins.filter((plugin) => plugin !== storagePlugin))
    expect(withoutStorage.toResult(new BaseError('storage_not_configured', 'off'))?.status).toBe(503)
  })

  it('adds the rows of a plug-in given beside the list', () => {
    const extra = { ...storagePlugin, name: 'extra', errorRows: { extra_refusal: { status: 409 } } } satisfies HttpPlugin
    expect(catalogueOf([extra]).statusOfCode('extra_refusal')).toBe(409)
    expect(gatewayCatalogue.statusOfCode('extra_refusal')).toBeUndefined()
  })

  it('refuses a code two sources give different statuses, naming both', () => {
    const conflicting = { ...storagePlugin, name: 'rogue', errorRows: { payment_replayed: { status: 400 } } } satisfies HttpPlugin
    expect(() => catalogueOf([conflicting])).toThrow(/payment_replayed is 409 in storage but 400 in rogue/)
    expect(() => ErrorCatalogue.compose([{ name: 'core', errorRows: { invalid_json: { status: 400 } } }, { name: 'other', errorRows: { invalid_json: { status: 422 } } }])).toThrow(/invalid_json/)
  })

  it('accepts a code two sources give the same status', () => {
    const agreeing = { ...storagePlugin, name: 'twin', errorRows: { payment_replayed: { status: 409 } } } satisfies HttpPlugin
    expect(catalogueOf([agreeing]).statusOfCode('payment_replayed')).toBe(409)
  })
})
