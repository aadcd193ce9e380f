import { sessionTokenOf } from '../handlers/core/session.js'
import { describe, expect, it } from 'vitest'
import { CollectingEventSink } from '../../tests/support/shadowFixtures.js'
import { ArrivalGate } from '../gate/ArrivalGate.js'
import { PublicSet } from '../gate/PublicSet.js'
import { exchangeFor } from '../../tests/support/pipelineFixtures.js'
import { answeredByCatalogue } from '../../tests/support/answered.js'
import { gatewayCatalogue } from '../handlers/plugins.js'
import { AuthRequiredError } from '../gate/AuthRequiredError.js'
import type { OperationInfo, RequestExchange } from '../shared/http/index.js'
import { gateStage } from './gateStage.js'

const session = { wallet: '0x0000000000000000000000000000000000000001', expires_at: 2_000_000_000 }

function setup() {
  const events = new CollectingEventSink()
  let authRequired = 0
  const gate = new ArrivalGate({
    publicSet: new PublicSet({ exact: ['/health'], prefixes: ['/doc/'], preRolloutExact: [], preRolloutPrefixes: [] }),
    hardGateEnabled: () => true,
    events,
    hashIp: (ip) => `sha256:${ip}`,
  })
  const stage = gateStage({
    gate,
    validateSession: async (request) => (sessionTokenOf(request) === 'good' ? session : undefined),
    onAuthRequired: () => authRequired++,
  })
  return { stage, events, authRequired: () => authRequired }
}

describe('gateStage', () => {
  it('gives its 401 back as a refusal value, not a rejection: the error stage renders it as it would a thrown one', async () => {
    const { stage } = setup()
    const answer = await stage.stage(routedTo(undefined))(exchangeOf('/secret-thing'))
    expect(answer).toBeInstanceOf(AuthRequiredError)
    expect(gatewayCatalogue.toResult(answer)).toEqual({ status: 401, body: { code: 'auth_required', from: '/secret-thing' }, component: 'AuthRequired' })
  })

  it('gates an unknown closed path before revealing whether it exists: JSON 401 auth_required', async () => {
    const { stage, authRequired } = setup()
    expect(await answeredByCatalogue(stage.stage(routedTo(undefined))(exchangeOf('/secret-thing')))).toEqual({
      status: 401,
      body: { code: 'auth_required', from: '/secret-thing' },
      component: 'AuthRequired',
    })
    expect(authRequired()).toBe(1)
  })

  it('redirects a browser to /login (no-store) and records the redirect event', async () => {
    const { stage, events } = setup()
    const result = await answeredByCatalogue(stage.stage(routedTo(undefined))(exchangeOf('/journal/x', { accept: 'text/html' })))
    expect(result).toEqual({ status: 302, headers: { Location: '/login?from=%2Fjournal%2Fx', 'Cache-Control': 'no-store' } })
    expect(events.events.map((e) => e.kind)).toEqual(['auth.gate.redirect'])
  })

  it('lets public paths and callers with a live session on to the route (its 404/405), and denies a dead session', async () => {
    const { stage } = setup()
    expect(await answeredByCatalogue(stage.stage(routedTo(undefined))(exchangeOf('/doc/nothing')))).toBeUndefined()
    expect(await answeredByCatalogue(stage.stage(routedTo(undefined))(exchangeOf('/secret-thing', { 'x-session-token': 'good' })))).toBeUndefined()
    expect((await answeredByCatalogue(stage.stage(routedTo(undefined))(exchangeOf('/secret-thing', { 'x-session-token': 'bad' }))))?.status).toBe(401)
  })
})

const exchangeOf = (path: string, headers: Record<string, string> = {}) => exchangeFor('GET', path, headers) as RequestExchange<Record<string, unknown>>

/** An operation under `security` (what `routeOf` tells the stage), or none. */
const routedTo =
  (security: OperationInfo['security'] | undefined) =>
  (): OperationInfo | undefined =>
    security && { operationId: 'op', method: 'get', pathTemplate: '/x', security, definition: {} }

describe('gateStage: the stage before the route', () => {
  const sessionOnly = [{ sessionToken: [] }]
  const run = async (security: OperationInfo['security'] | undefined, path: string, headers: Record<string, string> = {}) => {
    const { stage } = setup()
    const exchange = exchangeFor('GET', path, headers) as RequestExchange<Record<string, unknown>>
    return { result: await answeredByCatalogue(stage.stage(routedTo(security))(exchange)), locals: exchange.locals }
  }

  it('denies a session operation without a session before anything of the route runs', async () => {
    expect((await run(sessionOnly, '/journal')).result).toMatchObject({ status: 401, body: { code: 'auth_required' } })
    expect((await run(sessionOnly, '/journal', { 'x-session-token': 'forged' })).result).toMatchObject({ status: 401 })
    expect((await run(sessionOnly, '/journal', { accept: 'text/html' })).result).toMatchObject({ status: 302 })
  })

  it('lets a live session through, keeping the lookup for the security stage', async () => {
    const { result, locals } = await run(sessionOnly, '/journal', { 'x-session-token': 'good' })
    expect(result).toBeUndefined()
    expect(locals.session).toEqual(session)
    expect(await locals.sessionLookup).toEqual(session)
  })

  it('lets open operations and listed public paths through without a session', async () => {
    expect((await run([], '/anything')).result).toBeUndefined()
    expect((await run([{ overlordBearer: [] }], '/shadow/x')).result).toBeUndefined()
    expect((await run(undefined, '/health')).result).toBeUndefined()
  })

  it('leaves a bearer on a session operation to the security stage, but not on a path without operation', async () => {
    expect((await run([{ sessionToken: [] }, { overlordBearer: [] }], '/journal', { authorization: 'Bearer x' })).result).toBeUndefined()
    // No operation: a bearer must not reveal whether a closed path exists.
    expect((await run(undefined, '/secret-thing', { authorization: 'Bearer x' })).result).toMatchObject({ status: 401 })
  })
})

