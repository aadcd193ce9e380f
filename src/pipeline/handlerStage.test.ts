import { describe, expect, it } from 'vitest'
import type { Handler, Services } from '../handlers/types.js'
import type { RequestContext } from '../shared/http/index.js'
import { handlerStage } from './handlerStage.js'

describe('handlerStage', () => {
  it('hands each handler the request with ctx.services and returns its result; skips absent handlers', async () => {
    const services = { now: () => 42 } as unknown as Services
    const echoTime: Handler = (ctx) => ({ status: 200, body: { t: ctx.services.now(), id: ctx.params.id } })
    const bound = handlerStage({ echoTime, missing: undefined }, services)
    expect(Object.keys(bound)).toEqual(['echoTime'])
    const result = await bound.echoTime!({ params: { id: 'a' }, locals: {} } as unknown as RequestContext)
    expect(result).toEqual({ status: 200, body: { t: 42, id: 'a' } })
  })
})
