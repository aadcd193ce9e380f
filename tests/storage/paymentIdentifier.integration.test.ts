/**
 * x402 `payment-identifier` on `/store`, against the devnet peers: the 402 declares it; a
 * client that retries a paid upload with the first request's identifier — the natural retry after a lost
 * answer, re-signed with a fresh nonce — gets the first result, the file is stored once and the payer is charged
 * once; the same payment sent again (the same header: same authorization, same identifier) gets the first result
 * too, where without an identifier it is 409; the same identifier for another file is refused.
 */
import { randomBytes } from 'node:crypto'
import { RESEND_WINDOW_S } from '../../src/storage/StorageService.js'
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier'
import { createPublicClient, erc20Abi, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { evmEnv, type EvmPeers, multipart, payingClient, startEvmPeers, startAppGateway, type TestGateway } from './harness.js'

const PAYER = 4
let peers: EvmPeers
let gw: TestGateway

beforeAll(async () => {
  peers = await startEvmPeers()
  gw = await startAppGateway(evmEnv(peers), peers.dir)
}, 180_000)

afterAll(async () => {
  await gw?.close()
  await peers?.close()
})

const balance = () =>
  createPublicClient({ chain: peers.base.chain, transport: http(peers.base.url) }).readContract({
    address: peers.base.tokenAddress, abi: erc20Abi, functionName: 'balanceOf', args: [anvilAccount(PAYER).address],
  })

/** Quote, then a freshly signed payment for `data` carrying `id`; the store's answer. */
async function payWithIdentifier(data: Uint8Array, id: string) {
  const first = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
  expect(first.status).toBe(402)
  const body = await first.json()
  expect(body.extensions['payment-identifier']).toMatchObject({ info: { required: false } })
  const client = payingClient(peers.base, PAYER)
  const payload = await client.createPaymentPayload(client.getPaymentRequiredResponse((n) => first.headers.get(n), body))
  const declared = { ...(payload.extensions ?? body.extensions) }
  // appendPaymentIdentifierToExtensions refuses a malformed id on the client side: an attacker writes it by hand
  payload.extensions = id.length >= 16 ? appendPaymentIdentifierToExtensions(declared, id) : { ...declared, 'payment-identifier': { ...declared['payment-identifier'], info: { required: false, id } } }
  const r = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: client.encodePaymentSignatureHeader(payload) })
  return { status: r.status, body: await r.json(), price: BigInt(body.accepts[0].amount) }
}

describe('payment-identifier on POST /store', () => {
  it('a retry with the same identifier returns the first result, stores once and charges once', async () => {
    const data = randomBytes(4096)
    const id = generatePaymentId()
    const before = await balance()
    const first = await payWithIdentifier(data, id)
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    // the answer was lost; the client retries with a newly signed payment and the same identifier
    const again = await payWithIdentifier(data, id)
    expect(again.status, JSON.stringify(again.body)).toBe(200)
    expect(again.body).toEqual(first.body)
    // a little later still: settle on chain is done; the balance dropped by one price only
    expect(before - (await balance())).toBe(first.price)
    const rows = (await gw.ledger.listByPayer(anvilAccount(PAYER).address, 50)).filter((r) => r.upload.sha256 === first.body.sha256)
    expect(rows).toHaveLength(1)
  })

  it('the same payment sent again (same header, its answer lost) gets the first result; without an identifier it is 409', async () => {
    const data = randomBytes(3000)
    const quote = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
    const body = await quote.json()
    const client = payingClient(peers.base, PAYER)
    const payload = await client.createPaymentPayload(client.getPaymentRequiredResponse((n) => quote.headers.get(n), body))
    const plain = client.encodePaymentSignatureHeader({ ...payload, extensions: {} })
    payload.extensions = appendPaymentIdentifierToExtensions({ ...(payload.extensions ?? body.extensions) }, generatePaymentId())
    const header = client.encodePaymentSignatureHeader(payload)
    const before = await balance()
    const first = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: header })
    const firstBody = await first.json()
    expect(first.status, JSON.stringify(firstBody)).toBe(200)
    const again = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: header })
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual(firstBody)
    expect(again.headers.get('payment-response')).toBe(first.headers.get('payment-response'))
    // the same authorization without the identifier: a replay, refused before the body is read
    const replay = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: plain })
    expect(replay.status).toBe(409)
    expect((await replay.json()).error).toBe('payment_replayed')
    // the identifier for another file: the first result is not given for it
    const other = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(randomBytes(3000)), headers: header })
    expect(other.status).toBe(409)
    expect(before - (await balance())).toBe(BigInt(firstBody.settlement?.amount ?? payload.accepted.amount))
    // past the resend window the same header is a replay again, refused before its body is read: a payer cannot
    // keep resending a header it once paid with to hold upload slots
    const taken = Math.floor(Date.now() / 1000) - RESEND_WINDOW_S - 1
    await gw.ledger.db.updateTable('payment_identifiers').set({ created_at: taken }).where('scope', '=', 'store').execute()
    const late = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: header })
    expect(late.status).toBe(409)
    expect((await late.json()).error).toBe('payment_replayed')
  })

  it('refuses an identifier already used for another payment (409), charging nothing', async () => {
    const id = generatePaymentId()
    expect((await payWithIdentifier(randomBytes(1000), id)).status).toBe(200)
    const before = await balance()
    const other = await payWithIdentifier(randomBytes(1001), id)
    expect(other.status).toBe(409)
    expect(other.body.error).toBe('payment_replayed')
    expect(await balance()).toBe(before)
  })

  it('refuses a malformed identifier with 400', async () => {
    const r = await payWithIdentifier(randomBytes(900), 'short')
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('invalid_payment_header')
  })

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(gw?.validationErrors ?? [])]).toEqual([])
  })
})
