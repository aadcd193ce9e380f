import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FacilitatorUnavailableError } from './errors.js'
import { FacilitatorClient } from './FacilitatorClient.js'
import { FacilitatorPool } from './FacilitatorPool.js'
import type { PaymentPayload } from './headers.js'

/** A facilitator peer that counts calls and answers with `reply` (or hangs up without answering). */
function peer(reply: 'valid' | 'hang-up' | 'garbage') {
  const calls: string[] = []
  const server = createServer((req, res) => {
    calls.push(req.url ?? '')
    req.resume()
    req.on('end', () => {
      if (reply === 'hang-up') return req.socket.destroy()
      if (reply === 'garbage') return res.writeHead(502).end('bad gateway')
      const body = req.url === '/verify' ? { isValid: true, payer: '0xabc' } : { success: true, transaction: '0x' + '1'.repeat(64), network: 'eip155:8453' }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
  })
  return { server, calls }
}

const listen = (s: Server) => new Promise<string>((r) => s.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)))

let refused: string
const good = peer('valid')
const hangUp = peer('hang-up')
const garbage = peer('garbage')
const urls: Record<string, string> = {}
beforeAll(async () => {
  const probe = createServer()
  refused = await listen(probe)
  await new Promise((r) => probe.close(r))
  urls.good = await listen(good.server)
  urls.hangUp = await listen(hangUp.server)
  urls.garbage = await listen(garbage.server)
})
afterAll(() => {
  for (const p of [good, hangUp, garbage]) p.server.close()
})

const pool = (...list: string[]) => new FacilitatorPool({ clients: list.map((url) => new FacilitatorClient({ url, token: 't', timeoutMs: 2_000 })) })
const payload = { x402Version: 2, accepted: { network: 'eip155:8453' }, payload: {} } as PaymentPayload

describe('FacilitatorPool', () => {
  it('moves verify and settle to the next facilitator when the first refuses the connection', async () => {
    const before = good.calls.length
    const p = pool(refused, urls.good!)
    expect(await p.verify(payload, {})).toMatchObject({ isValid: true })
    expect(await p.settle(payload, {})).toMatchObject({ success: true })
    expect(good.calls.slice(before)).toEqual(['/verify', '/settle'])
  })

  it('moves verify on after any transport failure (a reply without a verdict)', async () => {
    expect(await pool(urls.garbage!, urls.good!).verify(payload, {})).toMatchObject({ isValid: true })
  })

  it('never moves a settle on once the request may have arrived: no second settlement anywhere', async () => {
    const before = good.calls.length
    for (const first of [urls.hangUp!, urls.garbage!]) {
      const error = await pool(first, urls.good!).settle(payload, {}).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(FacilitatorUnavailableError)
      expect((error as FacilitatorUnavailableError).beforeSend).toBe(false)
    }
    expect(good.calls.length).toBe(before)
  })

  it('throws the last failure when every facilitator is down', async () => {
    await expect(pool(refused, refused).verify(payload, {})).rejects.toBeInstanceOf(FacilitatorUnavailableError)
  })
})
