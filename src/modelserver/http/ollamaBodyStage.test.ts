import { afterEach, describe, expect, it } from 'vitest'
import type { Listening } from '../../../tests/support/listen.js'
import { serveStages, stagesOperations } from '../../../tests/support/pipelineFixtures.js'
import { routeStage } from '../../shared/http/routeStage.js'
import { ollamaBodyStage } from './ollamaBodyStage.js'

let server: Listening | undefined
afterEach(async () => server?.close())

async function serve(rawBodyOperations: ReadonlySet<string>) {
  const operations = stagesOperations()
  // its refusals rendered as a router without an app's on-error renders them (the fixture's plain error body)
  server = await serveStages([
    routeStage({ operations }),
    ollamaBodyStage({ operations: operations.operations, rawBodyOperations, limit: 64 }),
    (exchange) => {
      const req = exchange.req as typeof exchange.req & { body?: unknown; rawBody?: Buffer }
      return { status: 201, body: { body: req.body ?? null, raw: req.rawBody?.toString() ?? null, type: req.headers['content-type'] } }
    },
  ])
  return server.url
}

const post = (url: string, body: string, headers: Record<string, string>) => fetch(`${url}/items`, { method: 'POST', headers, body })

describe('ollamaBodyStage', () => {
  it('reads the body of a JSON operation as JSON whatever the Content-Type says (curl -d), keeping the raw bytes', async () => {
    const url = await serve(new Set())
    const variants: Record<string, string>[] = [{}, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'text/plain' }, { 'content-type': 'application/json' }]
    for (const headers of variants) {
      const res = await post(url, '{"name":"a"}', headers)
      expect(res.status).toBe(201)
      expect(await res.json()).toEqual({ body: { name: 'a' }, raw: '{"name":"a"}', type: 'application/json' })
    }
  })

  it('reads the bytes as UTF-8 whatever charset the label names, as Ollama (RFC 8259: the parameter has no effect)', async () => {
    const url = await serve(new Set())
    for (const charset of ['utf-16', 'UTF-16LE', 'utf-32', 'latin-2', 'utf-8']) {
      const res = await post(url, '{"name":"é"}', { 'content-type': `application/json; charset=${charset}` })
      expect(res.status, charset).toBe(201)
      expect(await res.json(), charset).toEqual({ body: { name: 'é' }, raw: '{"name":"é"}', type: 'application/json' })
    }
  })

  it('refuses a body it cannot read with a coded error: 400 broken, 413 too large', async () => {
    const url = await serve(new Set())
    const broken = await post(url, '{"name":', { 'content-type': 'text/plain' })
    expect(broken.status).toBe(400)
    expect((await broken.json()).error).toBe('invalid_json')
    const large = await post(url, JSON.stringify({ name: 'x'.repeat(100) }), { 'content-type': 'application/json' })
    expect(large.status).toBe(413)
    expect((await large.json()).error).toBe('payload_too_large')
  })

  it('never parses the body of a raw-byte operation, even labelled JSON (the handler hashes it as sent)', async () => {
    const url = await serve(new Set(['createItem']))
    const res = await post(url, '{"name":"a"}', { 'content-type': 'application/json' })
    expect(await res.json()).toEqual({ body: null, raw: null, type: 'application/octet-stream' })
  })
})
