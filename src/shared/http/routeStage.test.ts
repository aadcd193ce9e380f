import { describe, expect, it } from 'vitest'
import { exchangeFor, stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import { routeStage } from './routeStage.js'
import { MethodNotAllowedError, NoOperationError, renderRouterRefusal } from './routerRefusals.js'

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

  // the stage gives its refusal back; rendered here as a router without an app's on-error renders it
  const answer = (exchange: ReturnType<typeof exchangeFor>) => renderRouterRefusal(route(exchange))

  it('refuses a path without operation (404) and a path with other methods (405), as coded errors on-error renders', () => {
    expect(route(exchangeFor('GET', '/nowhere'))).toBeInstanceOf(NoOperationError)
    expect(answer(exchangeFor('GET', '/nowhere'))).toMatchObject({ status: 404, body: { error: 'not_found', message: 'No route for GET /nowhere.' } })
    expect(route(exchangeFor('PATCH', '/items/x'))).toBeInstanceOf(MethodNotAllowedError)
    expect(answer(exchangeFor('PATCH', '/items/x'))).toMatchObject({ status: 405, body: { error: 'method_not_allowed' } })
  })

  it('names the methods the path has in the Allow header of every 405, whoever renders its body', () => {
    const refusal = route(exchangeFor('PATCH', '/items/x')) as MethodNotAllowedError
    expect(refusal.allowed).toEqual(operations.allowedMethods('/items/x'))
    expect(refusal.answer?.headers?.Allow).toMatch(/^GET, HEAD/)
    expect(answer(exchangeFor('DELETE', '/page'))).toMatchObject({ status: 405, headers: { Allow: 'GET, HEAD' } })
  })

  it('answers a malformed percent-encoding in a path parameter 400, not 500', () => {
    expect(answer(exchangeFor('GET', '/items/%E0%A4%A'))).toMatchObject({ status: 400, body: { error: 'invalid_request' } })
  })
})
