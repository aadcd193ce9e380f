/**
 * The error answers the document promises, from the live gateway with response validation in `error` mode (an
 * undocumented status or body becomes a 500 and is recorded): the router's 413/415 on JSON bodies, `/store`'s
 * 415, 400 `invalid_multipart`, 503 `storage_not_configured`, 400 `invalid_payment_header` with the x402
 * decoder's precise message (not the router's generic `invalid_request`), 400 `invalid_tag`, and the public
 * `GET /health`. The storage upstream is a stub answering the two pricing calls; nothing is paid or stored.
 */
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestGateway, type TestGateway } from '../../tests/support/startTestGateway.js'

const GENESIS = 'wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8='

let bare: TestGateway
let paid: TestGateway
let upstream: Server

function fileForm(content = 'hello world'): FormData {
  const form = new FormData()
  form.append('file', new Blob([content], { type: 'text/plain' }), 'hello.txt')
  return form
}

const base64Json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')

beforeAll(async () => {
  upstream = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    if (req.url === '/v1/rates') return res.end(JSON.stringify({ winc: '1000000000000', fiat: { usd: 20 } }))
    if (req.url?.startsWith('/v1/price/bytes/')) return res.end(JSON.stringify({ winc: '500000000' }))
    res.statusCode = 404
    res.end('{}')
  })
  upstream.listen(0, '127.0.0.1')
  await once(upstream, 'listening')
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  bare = await startTestGateway()
  paid = await startTestGateway({
    env: {
      SERVICE_STORAGE__PAYMENT_URL: upstreamUrl,
      SERVICE_STORAGE__UPLOAD_URL: upstreamUrl,
      SERVICE_X402__PAY_TO_EVM: '0x52908400098527886E0F7030069857D2E4169EE7',
      SERVICE_X402__ASSET__EIP155_8453: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      SERVICE_X402__ASSET__EIP155_1: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
      SERVICE_X402__PAY_TO_ALGORAND: 'TEBIP2BXCP75UTGVFO4W3FWLGOBBSSH6LEACRCKQBDW7XQU7IPE2LJYYKM',
      SERVICE_ALGOD__GENESIS_HASH: GENESIS,
      FACILITATOR_TOKEN: randomBytes(32).toString('hex'), // a weak secret refuses the start
    },
  })
}, 60_000)

afterAll(async () => {
  await bare?.close()
  await paid?.close()
  upstream?.close()
})

describe('router answers on JSON-body operations', () => {
  it('413 payload_too_large past the 1 MiB JSON limit, 415 for another media type', async () => {
    const big = await fetch(`${bare.url}/users/challenge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wallet: 'x'.repeat(1_100_000) }),
    })
    expect(big.status).toBe(413)
    expect(await big.json()).toEqual({ error: 'payload_too_large', message: 'The request body is too large.' })
    const text = await fetch(`${bare.url}/admin/shadow/challenge`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'scope=auth' })
    expect(text.status).toBe(415)
    expect(await text.json()).toMatchObject({ error: 'unsupported_media_type' })
    expect(bare.validationErrors).toEqual([])
  })
})

describe('GET /health', () => {
  it('is a public liveness probe; /health/detailed stays gated', async () => {
    const health = await fetch(`${bare.url}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'ok' })
    expect((await fetch(`${bare.url}/health/detailed`)).status).toBe(401)
    const page = await fetch(`${bare.url}/health/detailed`, { headers: { accept: 'text/html' }, redirect: 'manual' })
    expect([page.status, page.headers.get('location')]).toEqual([302, '/login?from=%2Fhealth%2Fdetailed'])
    expect(bare.validationErrors).toEqual([])
  })
})

describe('POST /store', () => {
  it('415 for a body that is not multipart, 400 invalid_multipart for a broken or file-less one', async () => {
    // On a configured gateway: an unconfigured one answers 503 before it reads the body (the intake).
    const text = await fetch(`${paid.url}/store`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' })
    expect(text.status).toBe(415)
    const noFile = new FormData()
    noFile.append('other', 'x')
    const missing = await fetch(`${paid.url}/store`, { method: 'POST', body: noFile })
    expect([missing.status, await missing.json()]).toEqual([400, { error: 'invalid_multipart', message: 'missing file field `file`' }])
    const broken = await fetch(`${paid.url}/store`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, body: 'garbage' })
    expect([broken.status, (await broken.json()).error]).toEqual([400, 'invalid_multipart'])
    expect(paid.validationErrors).toEqual([])
  })

  it('503 storage_not_configured names the missing settings', async () => {
    const res = await fetch(`${bare.url}/store`, { method: 'POST', body: fileForm() })
    expect(res.status).toBe(503)
    const body = await res.json()
    expect(body.error).toBe('storage_not_configured')
    expect(body.details.missing).toEqual(expect.arrayContaining(['SERVICE_X402__PAY_TO_EVM', 'FACILITATOR_TOKEN']))
    expect(bare.validationErrors).toEqual([])
  })

  it('a payment header that is not base64 gets the x402 decoder\'s 400 invalid_payment_header, not invalid_request', async () => {
    const quote = await fetch(`${paid.url}/store`, { method: 'POST', body: fileForm() })
    expect(quote.status).toBe(402)
    for (const [header, message] of [
      ['PAYMENT-SIGNATURE', 'malformed payment header: PAYMENT-SIGNATURE is not base64'],
      ['X-PAYMENT', 'malformed payment header: X-PAYMENT is not base64'],
    ] as const) {
      const res = await fetch(`${paid.url}/store`, { method: 'POST', body: fileForm(), headers: { [header]: '!!not base64!!' } })
      expect([res.status, await res.json()], header).toEqual([400, { error: 'invalid_payment_header', message }])
    }
    const notJson = await fetch(`${paid.url}/store`, { method: 'POST', body: fileForm(), headers: { 'PAYMENT-SIGNATURE': Buffer.from('{nope').toString('base64') } })
    expect(await notJson.json()).toEqual({ error: 'invalid_payment_header', message: 'malformed payment header: PAYMENT-SIGNATURE is not base64 of JSON' })
    expect(paid.validationErrors).toEqual([])
  })

  it('400 invalid_tag once a payment header is decoded, before anything is verified or settled', async () => {
    const header = base64Json({ x402Version: 2, accepted: { scheme: 'exact', network: 'eip155:8453' }, payload: {} })
    const res = await fetch(`${paid.url}/store`, { method: 'POST', body: fileForm(), headers: { 'PAYMENT-SIGNATURE': header, 'X-SVC-Tag-App': '' } })
    expect([res.status, await res.json()]).toEqual([400, { error: 'invalid_tag', message: 'X-SVC-Tag-App must be 1 to 128 printable ASCII characters' }])
    expect(paid.validationErrors).toEqual([])
  })
})
