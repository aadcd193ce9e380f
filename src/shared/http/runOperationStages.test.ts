import { once } from 'node:events'
import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { serveStages } from '../../../tests/support/pipelineFixtures.js'
import type { Listening } from '../../../tests/support/listen.js'
import type { OperationStage } from './RequestExchange.js'

let server: Listening | undefined
afterEach(async () => server?.close())

const answer = (status: number, message: string): OperationStage => () => ({ status, body: { error: 'e', message }, component: 'Error' })

describe('runOperationStages', () => {
  it('runs the stages in order until one answers; the rest never run', async () => {
    const ran: string[] = []
    const step = (name: string): OperationStage => () => void ran.push(name)
    const later = async () => {
      ran.push('async')
      return undefined
    }
    server = await serveStages([step('first'), later, step('second'), answer(404, 'third'), step('never')])
    const res = await fetch(`${server.url}/anything`)
    expect(res.status).toBe(404)
    expect((await res.json()).message).toBe('third')
    expect(ran).toEqual(['first', 'async', 'second'])
  })

  it('maps an error any stage throws or rejects with, and a mapper that throws in turn is a bare 500', async () => {
    server = await serveStages(
      [
        (exchange) => {
          if (exchange.path === '/sync') throw new Error('sync')
          if (exchange.path === '/mapper') throw new Error('mapper')
          return Promise.reject(new Error('async'))
        },
      ],
      (error) => {
        if ((error as Error).message === 'mapper') throw new Error('mapper broke')
        return { status: 409, body: { error: 'mapped', message: (error as Error).message } }
      },
    )
    expect(await (await fetch(`${server.url}/sync`)).json()).toEqual({ error: 'mapped', message: 'sync' })
    expect(await (await fetch(`${server.url}/async`)).json()).toEqual({ error: 'mapped', message: 'async' })
    const broken = await fetch(`${server.url}/mapper`)
    expect(broken.status).toBe(500)
    expect((await broken.json()).error).toBe('internal_error')
  })

  it('answers a malformed percent-encoding met by any stage 400, never 500', async () => {
    server = await serveStages([() => void decodeURIComponent('%E0%A4%A')])
    const res = await fetch(`${server.url}/x`)
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBe('invalid_request')
  })

  it('validates every answer, a stage\'s refusal too, against the document', async () => {
    server = await serveStages([() => ({ status: 404, body: { not: 'the Error shape' }, component: 'Error' })])
    const res = await fetch(`${server.url}/x`)
    expect(res.status).toBe(500)
    expect((await res.json()).error).toBe('response_validation_failed')
  })

  it('a stage that fails because its client hung up is nobody\'s error: no mapping (no error logged), nothing sent', async () => {
    const mapped: unknown[] = []
    let failed: () => void = () => undefined
    const stageFailed = new Promise<void>((resolve) => (failed = resolve))
    server = await serveStages(
      [
        async (exchange) => {
          if (exchange.path === '/answered') throw new Error('a fault of the server')
          await once(exchange.res, 'close') // a generation waiting on the request's signal, say
          setImmediate(failed)
          throw new DOMException('This operation was aborted', 'AbortError')
        },
      ],
      (error) => {
        mapped.push(error)
        return { status: 500, body: { error: 'internal_error', message: 'internal error' } }
      },
    )
    const client = request(`${server.url}/hangs-up`)
    client.on('error', () => undefined)
    client.end()
    await new Promise((r) => setTimeout(r, 100))
    client.destroy()
    await stageFailed
    expect(mapped).toEqual([])
    // a server fault while the client waits is still mapped (and logged by the mapper)
    expect((await fetch(`${server.url}/answered`)).status).toBe(500)
    expect(mapped).toHaveLength(1)
  })
})
