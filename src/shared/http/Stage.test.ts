import type { AddressInfo } from 'node:net'
import express from 'express'
import { describe, expect, it } from 'vitest'
import { createOpenApiRouter } from './createOpenApiRouter.js'
import type { OperationStage } from './RequestExchange.js'
import type { ResponseInfo } from './runOperationStages.js'
import { onError, onResponse, splitStages, type Stage, step } from './Stage.js'

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
