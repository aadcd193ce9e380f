import { AsyncLocalStorage } from 'node:async_hooks'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { describe, expect, it } from 'vitest'
import { createOpenApiRouter } from './createOpenApiRouter.js'
import type { OperationStage } from './RequestExchange.js'
import { type ResponseInfo, type StageStart, stageStartChannel } from './runOperationStages.js'
import { middleware, onError, onResponse, splitStages, type Stage, step } from './Stage.js'

describe('splitStages', () => {
  it('keeps the steps in list order, bare or named, and takes respond, on-error and on-response from their entries', () => {
    const first: OperationStage = () => undefined
    const second: OperationStage = () => ({ status: 200, body: {} })
    const respond = () => undefined
    const mapError = () => ({ status: 500, body: {} })
    const record = () => undefined
    const list: (Stage | OperationStage)[] = [
      step('first', first),
      second,
      { kind: 'respond', name: 'respond', run: respond },
      onError('on-error', mapError),
      onResponse('on-response', record),
    ]
    expect(splitStages(list)).toEqual({ steps: [first, second], respond, onError: mapError, onResponse: record })
  })

  it('leaves respond, on-error and on-response unset when the list has none (the router then uses its options)', () => {
    const only: OperationStage = () => undefined
    expect(splitStages([step('only', only)])).toEqual({ steps: [only], respond: undefined, onError: undefined, onResponse: undefined })
  })
})

describe('a router pipeline listed as named stages', () => {
  it("answers a thrown error with the list's on-error entry, through its respond entry, and reports it to on-response", async () => {
    const errorResponse = {
      description: 'error',
      content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } },
    }
    const router = createOpenApiRouter({
      document: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/boom': { get: { operationId: 'boom', security: [], responses: { '503': errorResponse } } } } },
      handlers: {
        boom: () => {
          throw new Error('down')
        },
      },
      mapError: () => ({ status: 500, body: { error: 'from_the_option' } }),
    })
    const finished: ResponseInfo[] = []
    const app = express().use(
      router.pipeline(
        step('route', router.stages.route),
        step('validation', router.stages.validation),
        step('handler', router.stages.handler),
        router.stages.respond,
        onError('on-error', (error) => ({ status: 503, body: { error: error instanceof Error ? error.message : 'unknown' } })),
        onResponse('on-response', (info) => finished.push(info)),
      ),
    )
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/boom`)
      expect([res.status, await res.json()]).toEqual([503, { error: 'down' }])
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(finished.map((info) => [info.operationId, info.status])).toEqual([['boom', 503]])
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe('middleware entries of the list', () => {
  it('must come before every step: a list that puts one after a step is refused when it is built', () => {
    const pass: OperationStage = () => undefined
    expect(() => splitStages([step('route', pass), middleware('cors', (_req, _res, next) => next())])).toThrow(/"cors" comes after a step/)
  })

  /** A one-route app whose list starts with `entries`; `GET /ok` answers the handler's body. */
  async function serve(entries: Stage[], run: (url: string) => Promise<void>) {
    const errorResponse = { description: 'error', content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } } }
    const okResponse = { description: 'ok', content: { 'application/json': { schema: { type: 'object', required: ['seen'], properties: { seen: { type: 'string' } } } } } }
    const router = createOpenApiRouter({
      document: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/ok': { get: { operationId: 'ok', security: [], responses: { '200': okResponse, '503': errorResponse } } } } },
      handlers: { ok: (ctx) => ({ status: 200, body: { seen: `${String(ctx.headers['x-seen'] ?? '')}|${trail.getStore() ?? 'none'}` } }) },
    })
    const app = express().use(
      router.pipeline(
        ...entries,
        step('route', router.stages.route),
        step('handler', router.stages.handler),
        router.stages.respond,
        onError('on-error', (error) => ({ status: 503, body: { error: error instanceof Error ? error.message : 'unknown' } })),
      ),
    )
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/ok`)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
  const trail = new AsyncLocalStorage<string>()

  it('runs the steps after every middleware passed, inside the last one’s next() (a context it set covers them)', async () => {
    const marks = middleware('marks', (req, _res, next) => {
      req.headers['x-seen'] = 'marked'
      next()
    })
    const context = middleware('context', (_req, _res, next) => trail.run('in-span', next))
    await serve([marks, context], async (url) => {
      const res = await fetch(url)
      expect([res.status, await res.json()]).toEqual([200, { seen: 'marked|in-span' }])
    })
  })

  it("answers a step's refusal given back as an Error value through on-error, as a thrown one, and runs no later step", async () => {
    const refusing = step('gate', () => new Error('refused'))
    await serve([refusing], async (url) => {
      const res = await fetch(url)
      expect([res.status, await res.json()]).toEqual([503, { error: 'refused' }])
    })
    const later = step('gate', async () => new Error('refused later'))
    await serve([later], async (url) => {
      const res = await fetch(url)
      expect([res.status, await res.json()]).toEqual([503, { error: 'refused later' }])
    })
  })

  it('stops at a middleware that answers by itself: no step runs', async () => {
    const preflight = middleware('preflight', (_req, res) => void res.status(204).end())
    await serve([preflight], async (url) => {
      const res = await fetch(url)
      expect(res.status).toBe(204)
      expect(await res.text()).toBe('')
    })
  })

  it("answers a middleware's next(error), its throw and its rejected promise through the list's on-error entry", async () => {
    const failing = middleware('store', (_req, _res, next) => next(new Error('store down')))
    await serve([failing], async (url) => {
      const res = await fetch(url)
      expect([res.status, await res.json()]).toEqual([503, { error: 'store down' }])
    })
    const throwing = middleware('store', () => {
      throw new Error('thrown')
    })
    await serve([throwing], async (url) => {
      const res = await fetch(url)
      expect([res.status, await res.json()]).toEqual([503, { error: 'thrown' }])
    })
    const rejecting = middleware('store', async () => {
      throw new Error('rejected')
    })
    await serve([rejecting], async (url) => {
      const res = await fetch(url)
      expect([res.status, await res.json()]).toEqual([503, { error: 'rejected' }])
    })
  })
})

describe("a middleware's refusal", () => {
  it('is checked against the responses of the operation the request would reach, as a step’s is', async () => {
    const errorResponse = { description: 'error', content: { 'application/json': { schema: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } } }
    const router = createOpenApiRouter({
      document: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/ok': { get: { operationId: 'ok', security: [], responses: { '200': errorResponse, '503': errorResponse } } } } },
      handlers: { ok: () => ({ status: 200, body: { error: 'none' } }) },
    })
    const refuse = (message: string) => middleware('guard', (_req, _res, next) => next(new Error(message)))
    const onErrorEntry = onError('on-error', (error) => ({ status: (error as Error).message === 'declared' ? 503 : 418, body: { error: (error as Error).message } }))
    for (const [message, status] of [['declared', 503], ['undeclared', 500]] as const) {
      const app = express().use(router.pipeline(refuse(message), step('route', router.stages.route), step('handler', router.stages.handler), router.stages.respond, onErrorEntry))
      const server = app.listen(0, '127.0.0.1')
      await new Promise((resolve) => server.once('listening', resolve))
      try {
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/ok`)
        // the 418 is not the route's: response validation answers 500 instead of letting it out
        expect(res.status, message).toBe(status)
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    }
  })
})

describe('the stage-start channel', () => {
  it('names each stage of the list as it starts, middleware first, then the steps the request reached and respond', async () => {
    const seen: string[] = []
    const listener = (message: unknown) => seen.push((message as StageStart).stage)
    stageStartChannel.subscribe(listener)
    try {
      const router = createOpenApiRouter({
        document: { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/ok': { get: { operationId: 'ok', security: [], responses: { '204': { description: 'ok' } } } } } },
        handlers: { ok: () => ({ status: 204 }) },
      })
      const app = express().use(
        router.pipeline(
          middleware('cors', (_req, _res, next) => next()),
          step('route', router.stages.route),
          step('handler', router.stages.handler),
          step('never reached', () => ({ status: 500 })),
          router.stages.respond,
        ),
      )
      const server = app.listen(0, '127.0.0.1')
      await new Promise((resolve) => server.once('listening', resolve))
      try {
        expect((await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/ok`)).status).toBe(204)
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()))
      }
    } finally {
      stageStartChannel.unsubscribe(listener)
    }
    expect(seen).toEqual(['cors', 'route', 'handler', 'respond'])
  })
})
