/**
 * "Bounded everything" on paid storage, through the real gateway app with response validation on:
 * beyond `SERVICE_STORAGE__MAX_CONCURRENT_UPLOADS` paid uploads at once an instance answers 503 `too_many_uploads`
 * with `Retry-After` in the document's error shape, before reading the body; once a slot frees up the next
 * upload is served. Only an upload whose payment header passed its rail's pre-check takes a
 * slot: a request without payment is still quoted while the slots are full.
 */
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { evmEnv, type EvmPeers, multipart, payingClient, startAppGateway, startEvmPeers } from './harness.js'

let peers: EvmPeers
let gw: Awaited<ReturnType<typeof startAppGateway>>

beforeAll(async () => {
  peers = await startEvmPeers()
  gw = await startAppGateway({ ...evmEnv(peers), SERVICE_STORAGE__MAX_CONCURRENT_UPLOADS: '1', SERVICE_STORAGE__BUSY_RETRY_AFTER_S: '7' }, peers.dir)
}, 180_000)
afterAll(async () => {
  await gw?.close()
  await peers?.close()
})

describe('POST /store concurrency bound', () => {
  /** A payment header for `data` from a stock client (it passes the pre-check, so its upload takes a slot). */
  const paymentHeaders = async (data: Buffer, payer: number) => {
    const first = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
    const client = payingClient(peers.base, payer)
    const required = client.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
    return client.encodePaymentSignatureHeader(await client.createPaymentPayload(required))
  }

  it('answers 503 too_many_uploads with Retry-After while the one slot is taken, then serves the next upload', async () => {
    // A paid upload whose body keeps coming: it holds the instance's only slot.
    const boundary = 'slowboundary'
    const held = request(`${gw.url}/store`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': '100000', ...(await paymentHeaders(Buffer.from('held'), 3)) },
    })
    held.on('error', () => undefined)
    held.write(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`)
    await new Promise((r) => setTimeout(r, 500))
    // a request without payment takes no slot: it is quoted
    expect((await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(Buffer.from('hello')) })).status).toBe(402)
    const busy = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(Buffer.from('hello')), headers: await paymentHeaders(Buffer.from('hello'), 4) })
    expect(busy.status).toBe(503)
    expect(busy.headers.get('retry-after')).toBe('7')
    expect(await busy.json()).toEqual({
      error: 'too_many_uploads',
      message: expect.stringContaining('nothing was charged'),
      details: { max_concurrent_uploads: 1, retry_after_s: 7 },
    })
    held.destroy()
    // the slot is given back when the held request fails
    const deadline = Date.now() + 10_000
    let next = 0
    while (Date.now() < deadline) {
      next = (await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(Buffer.from('hello')), headers: await paymentHeaders(Buffer.from('hello'), 4) })).status
      if (next !== 503) break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(next).toBe(200)
    expect(gw.validationErrors).toEqual([])
  })
})
