/**
 * A paid `/store` is one trace — the gateway's server span, and as its children the calls to
 * the facilitator (verify, settle) or the Algorand node, and to the storage upstream (the data item's upload),
 * each of which was sent the request's `traceparent`. The devnet peers are the real ones (they do not trace);
 * the gateway writes its spans to an in-memory exporter.
 */
import { createHash, randomBytes } from 'node:crypto'
import dc from 'node:diagnostics_channel'
import type { ClientRequest } from 'node:http'
import { SpanKind, trace } from '@opentelemetry/api'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace'
import algosdk from 'algosdk'
import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from '../../devnet/algod/algoAccounts.js'
import { USDC_ASA_ID } from '../../devnet/algod/AlgoLedger.js'
import { startAlgod, type AlgodPeer } from '../../devnet/algod/startAlgod.js'
import { createAlgodClient } from '../../src/x402/rails/algorand/createAlgodClient.js'
import { evmEnv, type EvmPeers, multipart, payAndStoreOk, startAppGateway, startEvmPeers } from './harness.js'

const ALGOD_TOKEN = 'd'.repeat(64)
const exporter = new InMemorySpanExporter()
const service = algosdk.generateAccount()
const payer = algoTestAccount(2)
let peers: EvmPeers
let node: AlgodPeer
let gw: Awaited<ReturnType<typeof startAppGateway>>

beforeAll(async () => {
  peers = await startEvmPeers()
  node = await startAlgod({
    token: ALGOD_TOKEN, roundIntervalMs: 200, assetCreator: algoTestAccount(0).address,
    accounts: [
      { address: payer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC },
      { address: service.addr.toString(), microAlgos: 1_000_000n, usdc: 0n },
    ],
  })
  const env: Record<string, string> = {
    ...evmEnv(peers),
    SERVICE_ALGOD__URL: node.url, SERVICE_ALGOD__TOKEN: ALGOD_TOKEN, SERVICE_X402__PAY_TO_ALGORAND: service.addr.toString(), SERVICE_ALGOD__TIMEOUT_MS: '5000',
    SERVICE_TRACING__ENABLED: '1',
  }
  delete env.SERVICE_ALGOD__GENESIS_HASH
  gw = await startAppGateway(env, peers.dir, { spanExporter: exporter })
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await node?.close()
  await peers?.close()
})

/**
 * The `traceparent` each outgoing request of this process carried, as written to the socket: fetch (undici)
 * and node:http publish their requests on Node's diagnostics channels.
 */
const sent: (string | undefined)[] = []
const onFetch = (message: unknown) => sent.push(/^traceparent: (.*)$/im.exec((message as { headers: string }).headers)?.[1]?.trim())
const onHttp = (message: unknown) => sent.push((message as { request: ClientRequest }).request.getHeader('traceparent') as string | undefined)
beforeAll(() => {
  dc.subscribe('undici:client:sendHeaders', onFetch)
  dc.subscribe('http.client.request.start', onHttp)
})
afterAll(() => {
  dc.unsubscribe('undici:client:sendHeaders', onFetch)
  dc.unsubscribe('http.client.request.start', onHttp)
})

/** The server span of the `/store` answered `status`, the spans of its trace, and its CLIENT spans' URLs. */
function storeTrace(status: number) {
  const spans = exporter.getFinishedSpans()
  const server = spans.find((s) => s.kind === SpanKind.SERVER && s.attributes['http.route'] === '/store' && s.attributes['http.response.status_code'] === status)
  expect(server, spans.map(describeSpan).join('\n')).toBeDefined()
  const traceId = server!.spanContext().traceId
  const inTrace = spans.filter((s) => s.spanContext().traceId === traceId)
  const clients = inTrace.filter((s) => s.kind === SpanKind.CLIENT)
  return { server: server!, traceId, inTrace, clients, urls: clients.map((s) => String(s.attributes['url.full'])) }
}

/** Each call is a child of the request's span (directly) and its request carried the traceparent naming the call. */
function expectPropagated(server: ReadableSpan, clients: ReadableSpan[]) {
  for (const client of clients) {
    expect(client.parentSpanContext?.spanId, describeSpan(client)).toBe(server.spanContext().spanId)
    expect(sent, `${describeSpan(client)} sent its traceparent`).toContain(`00-${client.spanContext().traceId}-${client.spanContext().spanId}-01`)
  }
}

const describeSpan = (s: ReadableSpan) => `${SpanKind[s.kind]} ${s.name} ${String(s.attributes['url.full'] ?? s.attributes['http.route'] ?? '')}`

describe('a paid /store is one trace', () => {
  it('holds the facilitator and upstream calls of the paid request, as children of its server span', async () => {
    exporter.reset()
    const result = await payAndStoreOk(gw.url, peers.base, 3, randomBytes(4_000))
    expect(result.arTxId).toBeTruthy()
    const { server: paid, traceId, inTrace, clients, urls } = storeTrace(200)
    // x402: verify and settle through the facilitator
    expect(urls, inTrace.map(describeSpan).join('\n')).toEqual(expect.arrayContaining([`${peers.facilitator.url}/verify`, `${peers.facilitator.url}/settle`]))
    // the data item's upload to the upstream (node:http, its own span)
    expect(urls).toContain(`http://127.0.0.1:${peers.upstreamPort}/tx`)
    expectPropagated(paid, clients)
    // the quote (the first POST /store, 402) is a trace of its own
    const quote = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.attributes['http.route'] === '/store' && s.attributes['http.response.status_code'] === 402)
    expect(quote).toBeDefined()
    expect(quote!.spanContext().traceId).not.toBe(traceId)
  })

  it('on the Algorand rail, holds the calls to the Algorand node', async () => {
    const data = randomBytes(3000)
    const first = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
    const req = (await first.json()).accepts.find((a: { network: string }) => a.network.startsWith('algorand:'))
    const algod = createAlgodClient(node.url, ALGOD_TOKEN)
    const text = `${req.resource}|${createHash('sha256').update(data).digest('hex')}|${data.length}|${BigInt(req.amount) / 1_000_000n}.${(BigInt(req.amount) % 1_000_000n).toString().padStart(6, '0')}`
    const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: payer.address, receiver: service.addr, assetIndex: USDC_ASA_ID, amount: BigInt(req.amount),
      note: new Uint8Array(createHash('sha256').update(text).digest()), suggestedParams: await algod.getTransactionParams().do(),
    })
    const { txid } = await algod.sendRawTransaction(txn.signTxn(payer.sk)).do()
    const header = Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'exact', network: req.network, resource: { url: req.resource, description: req.description, mimeType: req.mimeType }, accepted: req, extensions: {}, outputSchema: null, payload: { txId: txid } })).toString('base64')
    exporter.reset()
    const paid = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: { 'PAYMENT-SIGNATURE': header } })
    expect(paid.status, await paid.clone().text()).toBe(200)
    await paid.arrayBuffer()
    const { server, inTrace, clients, urls } = storeTrace(200)
    expect(urls.filter((u) => u.startsWith(`${node.url}/v2/transactions/pending/${txid}`)).length, inTrace.map(describeSpan).join('\n')).toBeGreaterThan(0)
    expect(urls).toContain(`http://127.0.0.1:${peers.upstreamPort}/tx`)
    expectPropagated(server, clients)
  })
})

describe('the chain RPC', () => {
  it("viem's http transport (fetch) makes a child span of the active one and sends its traceparent", async () => {
    exporter.reset()
    const chainId = await trace.getTracer('test').startActiveSpan('a request', async (span) => {
      try {
        return await createPublicClient({ transport: http(peers.base.url, { retryCount: 0 }) }).getChainId()
      } finally {
        span.end()
      }
    })
    expect(chainId).toBe(8453)
    const spans = exporter.getFinishedSpans()
    const parent = spans.find((s) => s.name === 'a request')!
    const rpc = spans.filter((s) => s.kind === SpanKind.CLIENT && String(s.attributes['url.full']).startsWith(peers.base.url))
    expect(rpc.length, spans.map(describeSpan).join('\n')).toBe(1)
    expectPropagated(parent, rpc)
  })
})
