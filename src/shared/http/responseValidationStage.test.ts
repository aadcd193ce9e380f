import type { AddressInfo } from 'node:net'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createCapturingLogger } from '../../../tests/support/createCapturingLogger.js'
import { stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import { ResponseValidator } from './ResponseValidator.js'
import { type ResponseValidationMode, responseValidationStage } from './responseValidationStage.js'
import type { ResponseValidationReport } from './types.js'
import type { UnroutedResult } from './RequestExchange.js'

const operations = stagesOperations()
const info = (id: string) => operations.byId.get(id)!.info
let close: (() => void) | undefined
afterEach(() => close?.())

/** Sends `result` through a responder in `mode` and returns what the client got. */
async function through(mode: ResponseValidationMode, result: UnroutedResult, operationId?: string, method = 'GET') {
  const reports: ResponseValidationReport[] = []
  const respond = responseValidationStage({
    responseValidator: new ResponseValidator(operations.document as never),
    mode,
    onResponseValidationError: (r) => reports.push(r),
    logger: createCapturingLogger().logger,
  })
  const server = createServer((req: IncomingMessage, res: ServerResponse) => void respond(req, res, result, operationId ? info(operationId) : undefined))
  server.listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  close = () => server.close()
  const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, { method })
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text(), reports }
}

describe('responseValidationStage', () => {
  it('sends a result that matches the operation as it is', async () => {
    const sent = await through('error', { status: 200, body: { id: 'a' } }, 'getItem')
    expect(sent).toMatchObject({ status: 200, text: '{"id":"a"}', reports: [] })
    expect(sent.type).toMatch(/^application\/json/)
  })

  it('replaces a mismatching result with 500 in `error` mode, reporting it', async () => {
    const sent = await through('error', { status: 200, body: { name: 'no id' } }, 'getItem')
    expect(sent.status).toBe(500)
    expect(JSON.parse(sent.text).error).toBe('response_validation_failed')
    expect(sent.reports).toHaveLength(1)
    expect(sent.reports[0]).toMatchObject({ operationId: 'getItem', status: 200 })
  })

  it('sends a mismatching result as it is in `warn` mode (still reported), and checks nothing in `off` mode', async () => {
    const warned = await through('warn', { status: 418, body: { odd: true } }, 'getItem')
    expect(warned.status).toBe(418)
    expect(warned.reports).toHaveLength(1)
    const off = await through('off', { status: 418, body: { odd: true } }, 'getItem')
    expect(off).toMatchObject({ status: 418, reports: [] })
  })

  it('validates a response outside any operation against the component it names', async () => {
    const wrong = await through('error', { status: 404, body: { error: 'not_found' }, component: 'Error' })
    expect(wrong.status).toBe(500)
    const right = await through('error', { status: 404, body: { error: 'not_found', message: 'no' }, component: 'Error' })
    expect(right.status).toBe(404)
  })

  it('answers HEAD with the headers and without the body', async () => {
    const sent = await through('error', { status: 200, contentType: 'text/plain', body: 'content' }, 'getPage', 'HEAD')
    expect(sent).toMatchObject({ status: 200, text: '', reports: [] })
  })

  it('pipes a streamed body', async () => {
    const stream = (async function* () {
      yield 'a\n'
      yield 'b\n'
    })()
    const sent = await through('error', { status: 200, contentType: 'text/plain', stream }, 'getPage')
    expect(sent).toMatchObject({ status: 200, text: 'a\nb\n' })
  })

  it('sends a stream’s status and headers before its first chunk when the result asks (flushHeaders)', async () => {
    const respond = responseValidationStage({ responseValidator: new ResponseValidator(operations.document as never), mode: 'error' })
    let release: () => void = () => {}
    const firstChunk = new Promise<void>((resolve) => (release = resolve))
    const stream = (async function* () {
      await firstChunk // produced only once the client has the headers
      yield 'a\n'
    })()
    const server = createServer((req, res) => void respond(req, res, { status: 200, contentType: 'text/plain', stream, flushHeaders: true }, info('getPage')))
    server.listen(0, '127.0.0.1')
    await new Promise((r) => server.once('listening', r))
    close = () => server.close()
    // Without the headers sent first this waits for a chunk that waits for it: the test's time-out fails it (a
    // shorter timer of its own would lose to a stalled event loop on a loaded machine).
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`)
    release()
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('a\n')
  })
})
