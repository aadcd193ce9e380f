import { sessionTokenOf } from '../handlers/core/session.js'
import { describe, expect, it } from 'vitest'
import { CollectingEventSink } from '../../tests/support/shadowFixtures.js'
import { ArrivalGate } from '../gate/ArrivalGate.js'
import { PublicSet } from '../gate/PublicSet.js'
import type { GatewayLocals, Services } from '../handlers/types.js'
import type { RequestContext, SecurityRequirements } from '../shared/http/index.js'
import { gateStage } from './gateStage.js'
import { securityStage } from './securityStage.js'
import { answeredByCatalogue } from '../../tests/support/answered.js'

const session = { wallet: '0x0000000000000000000000000000000000000001', expires_at: 2_000_000_000 }
const SESSION: SecurityRequirements = [{ sessionToken: [] }, { sessionCookie: [] }]
const BEARER: SecurityRequirements = [{ overlordBearer: [] }]

function setup(hardGate = true) {
  let lookups = 0
  const services = {
    login: {
      validate: async (token: string | undefined) => {
        lookups++
        return token === 'good' ? session : undefined
      },
    },
  } as unknown as Services
  const gate = new ArrivalGate({
    publicSet: new PublicSet({ exact: [], prefixes: [], preRolloutExact: ['/agents'], preRolloutPrefixes: [] }),
    hardGateEnabled: () => hardGate,
    events: new CollectingEventSink(),
    hashIp: (ip) => ip,
  })
  const stage = securityStage({
    services,
    gate,
    gateStage: gateStage({ gate, validateSession: (request) => services.login.validate(sessionTokenOf(request)) }),
    setups: [{ securityHandlers: { apiKey: (ctx) => ctx.headers['x-key'] === 'k' && ctx.services === services } }],
  })
  return { stage, lookups: () => lookups }
}

function context(path: string, security: SecurityRequirements, headers: Record<string, string> = {}, method = 'GET'): RequestContext<GatewayLocals> {
  return {
    operation: { operationId: 'op', method: method.toLowerCase(), pathTemplate: path, security, definition: {} },
    operationId: 'op',
    method,
    path,
    url: path,
    params: {},
    query: {},
    headers,
    body: undefined,
    security: {},
    ip: '127.0.0.1',
    raw: {} as never,
    signal: new AbortController().signal,
    locals: {},
  }
}

describe('securityStage', () => {
  it('a live session satisfies both session schemes with one lookup and lands in locals', async () => {
    const { stage, lookups } = setup()
    const ctx = context('/agents', SESSION, { 'x-session-token': 'good' })
    expect(await stage.handlers.sessionToken!(ctx)).toEqual(session)
    expect(await stage.handlers.sessionCookie!(ctx)).toEqual(session)
    expect(ctx.locals.session).toEqual(session)
    expect(lookups()).toBe(1)
  })

  it('the cookie counts on GET only', async () => {
    const { stage } = setup()
    expect(await stage.handlers.sessionCookie!(context('/agents', SESSION, { cookie: 'svc_session=good' }))).toEqual(session)
    expect(await stage.handlers.sessionCookie!(context('/agents', SESSION, { cookie: 'svc_session=good' }, 'POST'))).toBeUndefined()
  })

  it('without a session: unsatisfied under the hard gate, anonymous on the pre-rollout list when it is off', async () => {
    expect(await setup(true).stage.handlers.sessionToken!(context('/agents', SESSION))).toBeUndefined()
    expect(await setup(false).stage.handlers.sessionToken!(context('/agents', SESSION))).toEqual({ anonymous: true })
  })

  it('a session operation left unsatisfied is answered by the gate', async () => {
    const { stage } = setup()
    expect(await answeredByCatalogue(stage.unauthorized(context('/agents', SESSION)))).toMatchObject({ status: 401, body: { code: 'auth_required', from: '/agents' } })
  })

  it('the bearer scheme gets its own 401s: invalid bearer, a session is not a bearer, none at all', async () => {
    const { stage } = setup()
    expect((await answeredByCatalogue(stage.unauthorized(context('/vault', BEARER, { authorization: 'Bearer x' })))).body).toMatchObject({ error: 'bearer_invalid' })
    expect((await answeredByCatalogue(stage.unauthorized(context('/vault', BEARER, { 'x-session-token': 'good' })))).body).toMatchObject({ error: 'insufficient_privilege' })
    expect((await answeredByCatalogue(stage.unauthorized(context('/vault', BEARER)))).body).toMatchObject({ error: 'bearer_required' })
  })

  it("domain schemes see the request with the services", async () => {
    const { stage } = setup()
    expect(await stage.handlers.apiKey!(context('/x', [{ apiKey: [] }], { 'x-key': 'k' }))).toBe(true)
    expect(await stage.handlers.apiKey!(context('/x', [{ apiKey: [] }], { 'x-key': 'no' }))).toBe(false)
  })
})
