import { describe, expect, it } from 'vitest'
import { exchangeFor, stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import type { RequestExchange } from './RequestExchange.js'
import { routeStage } from './routeStage.js'
import { renderRouterRefusal } from './routerRefusals.js'
import { securityRequirementsStage } from './securityRequirementsStage.js'

const operations = stagesOperations()
const route = routeStage({ operations })

function routed(method: string, url: string, headers: Record<string, string> = {}): RequestExchange {
  const exchange = exchangeFor(method, url, headers)
  route(exchange)
  return exchange
}

/** The stage gives its refusal back; rendered as a router without an app's on-error renders it. */
const rendered = (answer: unknown) => (answer instanceof Error ? renderRouterRefusal(answer) : answer)

const stage = securityRequirementsStage({
  securityHandlers: {
    key: (ctx) => ctx.headers['x-key'] === 'good' && { user: 'u' },
    second: (ctx) => {
      if (ctx.headers['x-second'] !== 'good') throw new Error('no second factor')
      return true
    },
  },
})

describe('securityRequirementsStage', () => {
  it('lets a request on when one requirement is fully satisfied, recording each verdict', async () => {
    const exchange = routed('POST', '/items', { 'x-key': 'good' })
    expect(await stage(exchange)).toBeUndefined()
    expect(exchange.context!.security).toEqual({ key: { user: 'u' }, authorized: true })
  })

  it('refuses a request that satisfies no requirement: 401 by default, or what `unauthorized` answers', async () => {
    expect(rendered(await stage(routed('POST', '/items', { 'x-key': 'forged' })))).toMatchObject({ status: 401, body: { error: 'unauthorized' } })
    expect(rendered(await stage(routed('POST', '/items')))).toMatchObject({ status: 401 })
    const custom = securityRequirementsStage({ unauthorized: (ctx) => ({ status: 401, body: { error: 'nope', message: ctx.operationId } }) })
    expect(await custom(routed('POST', '/items'))).toEqual({ status: 401, body: { error: 'nope', message: 'createItem' } })
  })

  it('counts a scheme whose handler throws as not satisfied (never as a pass)', async () => {
    const exchange = routed('DELETE', '/items/x', { 'x-second': 'forged' })
    expect(rendered(await stage(exchange))).toMatchObject({ status: 401 })
    expect((exchange.context!.security.second as { error: Error }).error.message).toBe('no second factor')
  })

  it('counts a scheme whose promise rejects as not satisfied: 401, never a pass or a 500, beside one that answers at once', async () => {
    const rejecting = securityRequirementsStage({
      securityHandlers: { key: async () => Promise.reject(new Error('token store down')), second: () => undefined },
    })
    const exchange = routed('DELETE', '/items/x', { 'x-key': 'good', 'x-second': 'good' })
    expect(rendered(await rejecting(exchange))).toMatchObject({ status: 401 })
    expect((exchange.context!.security.key as { error: Error }).error.message).toBe('token store down')
    expect(exchange.context!.security.authorized).toBe(false)
  })

  it('an error `failsRequest` names fails the request even where another requirement ({}) lets it on; any other throw only fails its scheme', async () => {
    class StoreDown extends Error {}
    const checked = (error: Error) =>
      securityRequirementsStage({ securityHandlers: { key: () => Promise.reject(error) }, failsRequest: (e) => e instanceof StoreDown })
    const down = new StoreDown('token store down')
    const failed = routed('GET', '/either', { 'x-key': 'sent' })
    expect(await checked(down)(failed)).toBe(down)
    expect(failed.context!.security).toEqual({ key: { error: down }, authorized: false })
    const anonymous = routed('GET', '/either', { 'x-key': 'forged' })
    expect(await checked(new Error('bad key'))(anonymous)).toBeUndefined()
    expect(anonymous.context!.security.authorized).toBe(true)
  })

  it('needs every scheme of a requirement object, not just one of them', async () => {
    const twoSchemes = securityRequirementsStage({ securityHandlers: { second: () => true } })
    // deleteItem: [{key, second}, {key}] — `second` alone satisfies neither requirement.
    expect(rendered(await twoSchemes(routed('DELETE', '/items/x')))).toMatchObject({ status: 401 })
  })

  it('decides at once when every scheme answers synchronously, and waits for one that answers later', async () => {
    // A scheme without its credential in the request answers synchronously (the gateway's, for a request that
    // does not carry that credential): the request then goes on without a promise in between.
    const sync = securityRequirementsStage({ securityHandlers: { key: () => undefined, second: () => true } })
    const refused = sync(routed('DELETE', '/items/x'))
    expect(refused).not.toBeInstanceOf(Promise)
    expect(rendered(refused as Error)).toMatchObject({ status: 401 })
    const passed = routed('POST', '/items', { 'x-key': 'good' })
    expect(securityRequirementsStage({ securityHandlers: { key: () => ({ user: 'u' }) } })(passed)).toBeUndefined()
    expect(passed.context!.security).toEqual({ key: { user: 'u' }, authorized: true })
    const later = securityRequirementsStage({ securityHandlers: { key: async () => ({ user: 'u' }), second: () => true } })
    const waited = routed('DELETE', '/items/x')
    const answer = later(waited)
    expect(answer).toBeInstanceOf(Promise)
    expect(await answer).toBeUndefined()
    expect(waited.context!.security).toMatchObject({ key: { user: 'u' }, second: true, authorized: true })
  })

  it('lets an operation with no requirement, or with an empty one, on without asking any scheme', () => {
    let asked = 0
    const counting = securityRequirementsStage({ securityHandlers: { key: () => (asked++, false) } })
    expect(counting(routed('GET', '/items/x'))).toBeUndefined()
    expect(asked).toBe(0)
    return Promise.resolve(counting(routed('GET', '/either'))).then((result) => {
      expect(result).toBeUndefined()
      expect(asked).toBe(1)
    })
  })
})
