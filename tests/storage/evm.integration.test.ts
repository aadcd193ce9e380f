import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { usdcArtifact, type LocalChain } from '../../devnet/chains/startChain.js'
import { evmEnv, type EvmPeers, multipart, PAY_TO_EVM, payingClient, startEvmPeers, startAppGateway, type TestGateway } from './harness.js'

let peers: EvmPeers
let gw: TestGateway
beforeAll(async () => {
  peers = await startEvmPeers()
  gw = await startAppGateway(evmEnv(peers), peers.dir)
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await peers?.close()
})

const abi = usdcArtifact().abi
const balanceOf = (chain: LocalChain, who: `0x${string}`) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({
    address: chain.tokenAddress, abi, functionName: 'balanceOf', args: [who],
  }) as Promise<bigint>

async function quote(data: Uint8Array, headers: Record<string, string> = {}) {
  const r = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers })
  return r
}

async function payAndStore(chain: LocalChain, payerIndex: number, data: Uint8Array, headers: Record<string, string> = {}) {
  const first = await quote(data, headers)
  expect(first.status).toBe(402)
  const body = await first.json()
  const http402 = payingClient(chain, payerIndex)
  const required = http402.getPaymentRequiredResponse((n) => first.headers.get(n), body)
  const payload = await http402.createPaymentPayload(required)
  const paid = await fetch(`${gw.url}/store`, {
    method: 'POST', body: multipart(data), headers: { ...headers, ...http402.encodePaymentSignatureHeader(payload) },
  })
  return { required, payload, paid, http402 }
}

describe('POST /store on the EVM rails (devnet)', () => {
  it('quotes three requirements in order with both amount names and PAYMENT-REQUIRED', async () => {
    const r = await quote(new TextEncoder().encode('hello quote'))
    expect(r.status).toBe(402)
    const body = await r.json()
    expect(body.x402Version).toBe(2)
    expect(body.accepts.map((a: { network: string }) => a.network)).toEqual(['eip155:8453', 'eip155:1', 'algorand:devnet-genesis-for-evm-tests'])
    for (const a of body.accepts) {
      expect(a.amount).toBe(a.maxAmountRequired)
      expect(a.resource).toBe(`${gw.url}/store`)
    }
    const header = JSON.parse(Buffer.from(r.headers.get('payment-required')!, 'base64').toString())
    expect(header).toEqual(body)
  })

  it('rejects an empty file with 400 empty body, and an unknown network with 400', async () => {
    const r = await quote(new Uint8Array())
    expect(r.status).toBe(400)
    expect(await r.json()).toEqual({ error: 'empty_body', message: 'empty body' })
    const bad = Buffer.from(JSON.stringify({ x402Version: 2, accepted: { network: 'eip155:137' }, payload: {} })).toString('base64')
    const u = await quote(new TextEncoder().encode('x'), { 'PAYMENT-SIGNATURE': bad })
    expect(u.status).toBe(400)
    expect(await u.json()).toMatchObject({ error: 'unsupported_network', message: 'unsupported network eip155:137' })
    const garbage = await quote(new TextEncoder().encode('x'), { 'X-PAYMENT': '%%%' })
    expect(garbage.status).toBe(400)
    expect((await garbage.json()).error).toBe('invalid_payment_header')
  })

  for (const which of ['base', 'mainnet'] as const) {
    it(`a reference x402 client pays and stores on ${which}; bytes read back; balance drops by the quote`, async () => {
      const chain = peers[which]
      const payer = anvilAccount(which === 'base' ? 2 : 3).address
      const data = randomBytes(150_000)
      const before = await balanceOf(chain, payer)
      const payToBefore = await balanceOf(chain, PAY_TO_EVM)
      const { required, paid, http402 } = await payAndStore(chain, which === 'base' ? 2 : 3, data, { 'X-SVC-Tag-App': 'it-app' })
      const result = await paid.json()
      expect(paid.status, JSON.stringify(result)).toBe(200)
      const sha = createHash('sha256').update(data).digest('hex')
      expect(result).toMatchObject({ sha256: sha, sizeBytes: data.length })
      expect(result.arTxId).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(result.settlement).toMatchObject({ success: true, network: chain.network })
      const settle = http402.getPaymentSettleResponse((n) => paid.headers.get(n))
      expect(settle.transaction).toBe(result.settlement.transaction)
      const quoted = BigInt(required.accepts.find((a) => a.network === chain.network)!.amount)
      expect(before - (await balanceOf(chain, payer))).toBe(quoted)
      expect((await balanceOf(chain, PAY_TO_EVM)) - payToBefore).toBe(quoted)
      const back = await fetch(`${peers.arweave.url}/${result.arTxId}`)
      expect(createHash('sha256').update(Buffer.from(await back.arrayBuffer())).digest('hex')).toBe(sha)
      // ledger
      const deposits = await gw.ledger.db.selectFrom('storage_deposits').selectAll().where('tx_hash', '=', result.settlement.transaction).execute()
      expect(deposits).toHaveLength(1)
      expect(deposits[0]).toMatchObject({ status: 'settled', amount_atomic: quoted.toString(), network: chain.network })
    })
  }

  it('50 concurrent requests with one payload: one settlement, one deposit, one upload', async () => {
    const data = randomBytes(2048)
    const first = await quote(data)
    const http402 = payingClient(peers.base, 4)
    const required = http402.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
    const payload = await http402.createPaymentPayload(required)
    const headers = http402.encodePaymentSignatureHeader(payload)
    const payer = anvilAccount(4).address
    const before = await balanceOf(peers.base, payer)
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers }).then(async (r) => ({ status: r.status, body: await r.json() }))),
    )
    const ok = replies.filter((r) => r.status === 200)
    expect(ok).toHaveLength(1)
    for (const r of replies.filter((x) => x.status !== 200)) expect([409, 402]).toContain(r.status)
    expect(replies.filter((r) => r.status === 409).length).toBeGreaterThan(0)
    expect(before - (await balanceOf(peers.base, payer))).toBe(BigInt(required.accepts[0]!.amount))
    const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce
    const deposits = await gw.ledger.db.selectFrom('storage_deposits').selectAll().where('nonce', '=', nonce.toLowerCase()).execute()
    expect(deposits).toHaveLength(1)
    const uploads = await gw.ledger.db.selectFrom('storage_uploads').selectAll().where('deposit_id', '=', deposits[0]!.deposit_id).execute()
    expect(uploads).toHaveLength(1)
    // the 49 refused requests left no bytes behind; the stored one's spooled bytes (small: in the database)
    // are gone too
    await new Promise((r) => setTimeout(r, 200))
    const spool = gw.service.config.spoolDir
    expect(readdirSync(join(spool, 'tmp'))).toEqual([])
    expect(existsSync(gw.service.config.sharedSpoolDir) ? readdirSync(gw.service.config.sharedSpoolDir) : []).toEqual([])
    expect(await gw.ledger.db.selectFrom('storage_spool').select('upload_id').execute()).toEqual([])
  })

  it('rejects a payload for less than the price with 402 insufficient_amount and keeps nothing', async () => {
    const data = randomBytes(4096)
    const first = await quote(data)
    const http402 = payingClient(peers.base, 5)
    const required = http402.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
    const cheaper = { ...required, accepts: required.accepts.map((a) => ({ ...a, amount: String(BigInt(a.amount) - 1n) })) }
    const payload = await http402.createPaymentPayload(cheaper)
    const r = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: http402.encodePaymentSignatureHeader(payload) })
    expect(r.status).toBe(402)
    expect((await r.json()).error).toBe('insufficient_amount')
  })

  it('a tampered signature gets 402 invalid_payment from the facilitator and the claim is released', async () => {
    const data = randomBytes(4096)
    const first = await quote(data)
    const http402 = payingClient(peers.base, 5)
    const required = http402.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
    const payload = await http402.createPaymentPayload(required)
    const p = payload.payload as { signature: string }
    p.signature = p.signature.slice(0, 10) + (p.signature[10] === 'a' ? 'b' : 'a') + p.signature.slice(11)
    const r = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: http402.encodePaymentSignatureHeader(payload) })
    expect(r.status).toBe(402)
    expect((await r.json()).error).toBe('invalid_payment')
    const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce
    expect(await gw.ledger.db.selectFrom('storage_deposits').selectAll().where('nonce', '=', nonce.toLowerCase()).execute()).toHaveLength(0)
  })

  it('upstream stopped mid-flow: settled deposit, 502, queued upload that completes once it is back, then verifies', async () => {
    const data = randomBytes(120_000)
    const first = await quote(data)
    const http402 = payingClient(peers.base, 5)
    const required = http402.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
    const payload = await http402.createPaymentPayload(required)
    await peers.upstream.close()
    // pricing is cached for 30 s, so the request gets past the quote and settles before the upload fails
    const r = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: http402.encodePaymentSignatureHeader(payload) })
    const body = await r.json()
    expect(r.status, JSON.stringify(body)).toBe(502)
    expect(body.error).toBe('storage_upstream_failed')
    const uploadId = body.details.upload_id as string
    let state = await gw.service.getUpload(uploadId)
    expect(state.status).toBe('queued')
    expect(state.deposit.status).toBe('settled')
    expect(state.deposit.tx_hash).toMatch(/^0x/)
    await peers.restartUpstream()
    gw.worker.start()
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      state = await gw.service.getUpload(uploadId)
      if (state.status === 'verified' || state.status === 'verify_failed') break
      await new Promise((res) => setTimeout(res, 300))
    }
    expect(state.ar_tx_id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(state.status, String(state.error)).toBe('verified')
    const back = await fetch(`${peers.arweave.url}/${state.ar_tx_id}`)
    expect(createHash('sha256').update(Buffer.from(await back.arrayBuffer())).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'))
    await gw.worker.stop()
  })

  it('with SERVICE_STORAGE__QUEUE_ON_UPSTREAM_FAILURE=1 an upstream failure answers 202 with a queue id that completes', async () => {
    const queued = await startAppGateway({ ...evmEnv(peers), SERVICE_STORAGE__QUEUE_ON_UPSTREAM_FAILURE: '1' }, peers.dir)
    try {
      const data = randomBytes(3000)
      const first = await fetch(`${queued.url}/store`, { method: 'POST', body: multipart(data) })
      const http402 = payingClient(peers.mainnet, 5)
      const required = http402.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
      const payload = await http402.createPaymentPayload(required)
      peers.upstream.fail({ status: 503, scope: 'uploads', times: 1 })
      const r = await fetch(`${queued.url}/store`, { method: 'POST', body: multipart(data), headers: http402.encodePaymentSignatureHeader(payload) })
      const body = await r.json()
      expect(r.status, JSON.stringify(body)).toBe(202)
      expect(body).toMatchObject({ status: 'queued', status_url: `/store/uploads/${body.queue_id}` })
      expect(body.queue_id).toMatch(/^upl_[0-9A-Z]{26}$/)
      expect(body.deposit).toMatchObject({ status: 'settled', network: 'eip155:1', amount_atomic: required.accepts[1]!.amount })
      queued.worker.start()
      let state = await (await fetch(`${queued.url}${body.status_url}`)).json()
      const deadline = Date.now() + 20_000
      while (state.status === 'queued' || state.status === 'uploading') {
        if (Date.now() > deadline) break
        await new Promise((res) => setTimeout(res, 300))
        state = await (await fetch(`${queued.url}${body.status_url}`)).json()
      }
      expect(['stored', 'verified', 'verify_failed']).toContain(state.status)
      expect(state.ar_tx_id).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const missing = await fetch(`${queued.url}/store/uploads/upl_00000000000000000000000000`)
      expect(missing.status).toBe(404)
      expect(queued.validationErrors).toEqual([])
    } finally {
      await queued.close()
    }
  })

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(gw?.validationErrors ?? [])]).toEqual([])
  })
})
