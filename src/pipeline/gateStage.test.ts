import { describe, expect, it } from 'vitest'
import { CollectingEventSink } from '../../tests/support/shadowFixtures.js'
import { ArrivalGate } from '../gate/ArrivalGate.js'
import { PublicSet } from '../gate/PublicSet.js'
import type { UnroutedRequest } from '../shared/http/index.js'
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
    validateSession: async (token) => (token === 'good' ? session : undefined),
    onAuthRequired: () => authRequired++,
  })
  return { stage, events, authRequired: () => authRequired }
}

const request = (path: string, headers: Record<string, string> = {}, reason: UnroutedRequest['reason'] = 'not_found'): UnroutedRequest => ({
  reason,
  method: 'GET',
  path,
  url: path,
  headers,
  ip: '127.0.0.1',
  raw: undefined as never,
})

describe('gateStage', () => {
  it('gates an unknown closed path before revealing whether it exists: JSON 401 auth_required', async () => {
    const { stage, authRequired } = setup()
    expect(await stage.unrouted(request('/secret-thing'))).toEqual({
      status: 401,
      body: { code: 'auth_required', from: '/secret-thing' },
      component: 'AuthRequired',
    })
    expect(authRequired()).toBe(1)
  })

  it('redirects a browser to /login (no-store) and records the redirect event', async () => {
    const { stage, events } = setup()
    const result = await stage.unrouted(request('/journal/x', { accept: 'text/html' }))
    expect(result).toEqual({ status: 302, headers: { Location: '/login?from=%2Fjournal%2Fx', 'Cache-Control': 'no-store' } })
    expect(events.events.map((e) => e.kind)).toEqual(['auth.gate.redirect'])
  })

  it('answers 404/405 for public paths and for callers with a live session', async () => {
    const { stage } = setup()
    expect((await stage.unrouted(request('/doc/nothing'))).status).toBe(404)
    expect((await stage.unrouted(request('/secret-thing', { 'x-session-token': 'good' }))).status).toBe(404)
    expect(await stage.unrouted(request('/secret-thing', { 'x-session-token': 'good' }, 'method_not_allowed'))).toMatchObject({
      status: 405,
      body: { error: 'method_not_allowed' },
    })
    expect((await stage.unrouted(request('/secret-thing', { 'x-session-token': 'bad' }))).status).toBe(401)
  })
})
