/**
 * One trace per request across the gateway and the model server. Both run in this process
 * with a tiny model, each with its own tracer provider writing to one in-memory exporter; the model server
 * joins the trace only through the `traceparent` the gateway sends it (its server span takes its parent from
 * the request's headers alone), so a gateway that does not propagate leaves the model server's span a root.
 */
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SpanKind } from '@opentelemetry/api'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { loadModelServerConfig } from '../../src/modelserver/config.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { waitFor } from '../support/waitFor.js'

const alice = privateKeyToAccount(generatePrivateKey())
let engine: Engine

beforeAll(async () => {
  engine = await createEngine({ threads: 1 })
})
afterAll(async () => {
  await engine?.dispose()
})

const tracedModelServer = { tracing: loadModelServerConfig({ MODELSERVER_TRACING_ENABLED: '1' }).tracing }

async function chat(gw: TestGateway, token: string): Promise<void> {
  const response = await fetch(`${gw.url}/llm/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-token': token },
    body: JSON.stringify({ model: 'svc-tiny-chat:latest', messages: [{ role: 'user', content: 'Hello' }], max_tokens: 4, seed: 1 }),
  })
  expect(response.status, await response.clone().text()).toBe(200)
  await response.arrayBuffer()
}

const serviceOf = (span: ReadableSpan) => span.resource.attributes['service.name']
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

describe('traces on in both programs', () => {
  const exporter = new InMemorySpanExporter()
  let ms: TestModelServer
  let gw: TestGateway
  let token: string

  beforeAll(async () => {
    ms = await startTestModelServer({ engine, config: tracedModelServer, spanExporter: exporter })
    gw = await startTestGateway({ modelServerUrl: ms.url, env: { SERVICE_TRACING__ENABLED: '1', SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000' }, spanExporter: exporter })
    token = await gw.login(alice)
  })
  afterAll(async () => {
    await gw?.close()
    await ms?.close()
  })

  it('a chat completion is one trace: gateway server span → its call of the model server → the model server span', async () => {
    exporter.reset()
    await chat(gw, token)
    // the gateway's span ends when its response is done; the model server's may end a moment later
    const spans = await waitFor('the gateway and model server spans', async () => {
      const all = exporter.getFinishedSpans()
      const gateway = all.find((s) => s.kind === SpanKind.SERVER && serviceOf(s) === 'pay2store-gateway' && s.attributes['http.route'] === '/llm/v1/chat/completions')
      const model = all.find((s) => s.kind === SpanKind.SERVER && serviceOf(s) === 'pay2store-modelserver')
      return gateway && model ? { all, gateway, model } : undefined
    }, 10_000)
    const { gateway, model, all } = spans
    expect(gateway.name).toBe('POST /llm/v1/chat/completions')
    expect(gateway.attributes['openapi.operation_id']).toBeDefined()
    expect(gateway.attributes['http.response.status_code']).toBe(200)
    expect(parentOf(gateway)).toBeUndefined() // the test's fetch sent no traceparent: the request begins the trace

    const traceId = gateway.spanContext().traceId
    const call = all.find((s) => s.kind === SpanKind.CLIENT && s.spanContext().spanId === parentOf(model))
    expect(call, 'the model server span has the gateway call as its parent').toBeDefined()
    expect(call!.spanContext().traceId).toBe(traceId)
    expect(parentOf(call!)).toBe(gateway.spanContext().spanId)
    expect(String(call!.attributes['url.full'])).toBe(`${ms.url}${String(model.attributes['url.path'])}`)
    expect(model.spanContext().traceId).toBe(traceId)
    expect(model.name).toBe('POST /v1/chat/completions')
    expect(model.attributes['http.response.status_code']).toBe(200)
    // every span this request made is in its trace (none of another request's)
    const mine = all.filter((s) => s.spanContext().traceId === traceId)
    expect(mine.map((s) => `${serviceOf(s)} ${SpanKind[s.kind]} ${s.name}`).sort()).toEqual(
      expect.arrayContaining(['pay2store-gateway SERVER POST /llm/v1/chat/completions', 'pay2store-modelserver SERVER POST /v1/chat/completions']),
    )
  })

  it('a caller that sends traceparent gets the gateway span in its own trace', async () => {
    exporter.reset()
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const parent = '00f067aa0ba902b7'
    const response = await fetch(`${gw.url}/health`, { headers: { traceparent: `00-${traceId}-${parent}-01` } })
    expect(response.status).toBe(200)
    const span = await waitFor('the /health span', async () => exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.attributes['http.route'] === '/health'), 10_000)
    expect(span.spanContext().traceId).toBe(traceId)
    expect(parentOf(span)).toBe(parent)
  })
})

describe('traces off in the gateway (the default)', () => {
  const exporter = new InMemorySpanExporter()
  let ms: TestModelServer
  let gw: TestGateway
  let token: string

  beforeAll(async () => {
    // the model server traces, so that what it received shows: a traceparent would make its span a child
    ms = await startTestModelServer({ engine, config: tracedModelServer, spanExporter: exporter })
    gw = await startTestGateway({ modelServerUrl: ms.url, env: { SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000' }, spanExporter: exporter })
    token = await gw.login(alice)
  })
  afterAll(async () => {
    await gw?.close()
    await ms?.close()
  })

  it('makes no span and sends no traceparent', async () => {
    exporter.reset()
    await chat(gw, token)
    const model = await waitFor('the model server span', async () => exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.name === 'POST /v1/chat/completions'), 10_000)
    expect(parentOf(model), 'the model server received no traceparent').toBeUndefined()
    expect(exporter.getFinishedSpans().filter((s) => serviceOf(s) === 'pay2store-gateway')).toEqual([])
    expect(exporter.getFinishedSpans().filter((s) => s.kind !== SpanKind.SERVER)).toEqual([])
  })
})

/** The spans an OTLP/HTTP collector received (JSON encoding: ids in hex, attributes as key/value lists). */
type OtlpSpan = { service: string; traceId: string; spanId: string; parentSpanId: string; name: string; kind: number }

/** A collector's OTLP/HTTP traces receiver: it keeps what `POST /v1/traces` brings and answers as a collector does. */
async function startCollector() {
  const spans: OtlpSpan[] = []
  const contentTypes: string[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end()
      contentTypes.push(String(req.headers['content-type']))
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: Omit<OtlpSpan, 'service'>[] }[] }[]
      }
      for (const rs of body.resourceSpans) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? ''
        for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, kind: span.kind })
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, contentTypes, close: () => new Promise<void>((r) => server.close(() => r())) }
}

describe('traces exported over OTLP/HTTP (the configuration a deployment uses)', () => {
  it('both programs send their spans of one request, one trace id, to the collector both are pointed at', async () => {
    const collector = await startCollector()
    const ms = await startTestModelServer({ engine, config: { tracing: loadModelServerConfig({ MODELSERVER_TRACING_ENABLED: '1', MODELSERVER_TRACING_OTLP_ENDPOINT: collector.url }).tracing } })
    const gw = await startTestGateway({ modelServerUrl: ms.url, env: { SERVICE_TRACING__ENABLED: '1', SERVICE_TRACING__OTLP_ENDPOINT: collector.url, SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000' } })
    try {
      await chat(gw, await gw.login(alice))
    } finally {
      // spans are batched; stopping flushes them (as a stopping process does)
      await gw.close()
      await ms.close()
      await collector.close()
    }
    expect(collector.contentTypes[0]).toBe('application/json')
    const gateway = collector.spans.find((s) => s.service === 'pay2store-gateway' && s.name === 'POST /llm/v1/chat/completions')
    const model = collector.spans.find((s) => s.service === 'pay2store-modelserver' && s.name === 'POST /v1/chat/completions')
    expect(gateway, JSON.stringify(collector.spans)).toBeDefined()
    expect(model).toBeDefined()
    expect(model!.traceId).toBe(gateway!.traceId)
    const call = collector.spans.find((s) => s.spanId === model!.parentSpanId)
    expect(call?.parentSpanId).toBe(gateway!.spanId)
  })
})

describe('a collector that is down', () => {
  it('costs spans, never requests, and does not hold up or fail the stop', async () => {
    // a port nothing listens on: every export is refused
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    const gw = await startTestGateway({ env: { SERVICE_TRACING__ENABLED: '1', SERVICE_TRACING__OTLP_ENDPOINT: `http://127.0.0.1:${port}` } })
    try {
      for (let i = 0; i < 20; i++) expect((await fetch(`${gw.url}/health`)).status).toBe(200)
    } finally {
      const started = Date.now()
      await gw.close() // resolves: an export that failed is a warning, not a failed stop
      // the last export is given 5 s, then dropped
      expect(Date.now() - started).toBeLessThan(8_000)
    }
  })
})
