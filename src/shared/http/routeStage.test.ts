import { describe, expect, it } from 'vitest'
import { exchangeFor, stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import { routeStage } from './routeStage.js'

describe('routeStage', () => {
  const operations = stagesOperations()
  const route = routeStage({ operations })

  it('builds the request context: the operation, path parameters percent-decoded, the query parsed', () => {
    const exchange = exchangeFor('GET', '/items/a%2Fb%3Ac?n=3&utm=x')
    expect(route(exchange)).toBeUndefined()
    const ctx = exchange.context!
    expect(ctx.operationId).toBe('getItem')
    expect(ctx.params).toEqual({ id: 'a/b:c' })
    expect(ctx.query).toEqual({ n: '3', utm: 'x' })
    expect(ctx.path).toBe('/items/a%2Fb%3Ac')
    expect(ctx.method).toBe('GET')
  })

  it('answers HEAD with the GET operation when the path documents no HEAD, keeping the method HEAD', () => {
    const exchange = exchangeFor('HEAD', '/page')
    expect(route(exchange)).toBeUndefined()
    expect(exchange.context!.operationId).toBe('getPage')
    expect(exchange.context!.method).toBe('HEAD')
    const head = exchangeFor('HEAD', '/blob')
    route(head)
    expect(head.context!.operationId).toBe('headBlob')
  })

  it('reuses a match made before it (the gate asks first): the request is matched once', () => {
    let matches = 0
    const counting = routeStage({ operations: { api: operations.api, allowedMethods: operations.allowedMethods, match: (m, p) => (matches++, operations.match(m, p)) } })
    const exchange = exchangeFor('GET', '/items/x')
    exchange.match = operations.match('GET', '/items/x')
    counting(exchange)
    expect(matches).toBe(0)
    counting(exchangeFor('GET', '/items/x'))
    expect(matches).toBe(1)
  })

  it('answers a path without operation 404 and a path with other methods 405 (or as `unrouted` says)', async () => {
    expect(await route(exchangeFor('GET', '/nowhere'))).toMatchObject({ status: 404, body: { error: 'not_found' } })
    expect(await route(exchangeFor('PATCH', '/items/x'))).toMatchObject({ status: 405, body: { error: 'method_not_allowed' } })
    const custom = routeStage({ operations, unrouted: (r) => ({ status: 404, body: { error: r.reason, message: r.path }, component: 'Error' }) })
    expect(await custom(exchangeFor('GET', '/nowhere'))).toEqual({ status: 404, body: { error: 'not_found', message: '/nowhere' }, component: 'Error' })
  })

  it('names the methods the path has in the Allow header of every 405, whoever writes its body', async () => {
    const allowed = ((await route(exchangeFor('PATCH', '/items/x'))) as { headers?: Record<string, string> }).headers?.Allow
    expect(allowed?.split(', ')).toEqual(operations.allowedMethods('/items/x'))
    expect(allowed).toMatch(/^GET, HEAD/)
    const custom = routeStage({ operations, unrouted: (r) => ({ status: 405, body: { error: r.reason } }) })
    expect(await custom(exchangeFor('DELETE', '/page'))).toMatchObject({ status: 405, headers: { Allow: 'GET, HEAD' } })
    const own = routeStage({ operations, unrouted: () => ({ status: 405, headers: { allow: 'GET' } }) })
    expect(await own(exchangeFor('DELETE', '/page'))).toEqual({ status: 405, headers: { allow: 'GET' } })
  })

  it('answers a malformed percent-encoding in a path parameter 400, not 500', () => {
    expect(route(exchangeFor('GET', '/items/%E0%A4%A'))).toMatchObject({ status: 400, body: { error: 'invalid_request' } })
  })
})
