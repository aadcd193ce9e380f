import { describe, expect, it } from 'vitest'
import { exchangeFor, stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import { operationHandlerStage } from './operationHandlerStage.js'
import { routeStage } from './routeStage.js'
import type { OperationHandler } from './types.js'

describe('operationHandlerStage', () => {
  it("calls the routed operation's handler with the request's context and answers what it returns", async () => {
    const operations = stagesOperations()
    const handlers = new Map<string, OperationHandler>([
      ['getItem', (ctx) => ({ status: 200, body: { id: ctx.params.id } })],
      ['getPage', () => ({ status: 200, body: 'page' })],
    ])
    const exchange = exchangeFor('GET', '/items/abc')
    routeStage({ operations })(exchange)
    expect(await operationHandlerStage(handlers)(exchange)).toEqual({ status: 200, body: { id: 'abc' } })
  })

  it("lets a handler's rejection through to the error mapping", async () => {
    const operations = stagesOperations()
    const exchange = exchangeFor('GET', '/items/abc')
    routeStage({ operations })(exchange)
    const failing = operationHandlerStage(new Map<string, OperationHandler>([['getItem', async () => Promise.reject(new Error('boom'))]]))
    await expect(failing(exchange)).rejects.toThrow('boom')
  })
})
