/**
 * Paid storage as x402 users meet it, through the real gateway app (OpenAPI routing, response validation
 * `error`) against devnet peers on free ports: quotes, failure 402s, the v2 body, discovery, a stock v1
 * client, the upstream credit and facilitator failover.
 */
import { mcpRawPost } from '../support/mcpRawPost.js'
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { PaymentRequiredV2Schema } from '@x402/core/schemas'
import { x402Client } from '@x402/core/client'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { validateAndExtract } from '@x402/extensions/bazaar'
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { type LocalChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { arweaveAddress } from '../../devnet/testing/arweaveKey.js'
import { evmEnv, type EvmPeers, multipart, PAY_TO_EVM, payingClient, startAppGateway, startEvmPeers, TOP_UP_DEPOSIT } from './harness.js'

let peers: EvmPeers
let gw: Awaited<ReturnType<typeof startAppGateway>>
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
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({ address: chain.tokenAddress, abi, functionName: 'balanceOf', args: [who] }) as Promise<bigint>

const post = (url: string, data: Uint8Array, headers: Record<string, string> = {}) => fetch(`${url}/store`, { method: 'POST', body: multipart(data), headers })
const decodeHeader = (r: Response, name: string) => JSON.parse(Buffer.from(r.headers.get(name) ?? '', 'base64').toString('utf8'))

/** A 402 a client can retry from: PAYMENT-REQUIRED equals the body, which is a valid x402 v2 PaymentRequired. */
async function expectActionable402(r: Response, error: string | null) {
  const body = await r.json()
  expect(r.status, JSON.stringify(body)).toBe(402)
  expect(body.error).toBe(error)
  expect(decodeHeader(r, 'PAYMENT-REQUIRED')).toEqual(body)
  expect(PaymentRequiredV2Schema.safeParse(body).success).toBe(true)
  expect(body.accepts.map((a: { network: string }) => a.network)).toEqual(['eip155:8453', 'eip155:1', 'algorand:devnet-genesis-for-evm-tests'])
  return body
}

async function deadUrl(): Promise<string> {
  const probe = createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r))
  const { port } = probe.address() as AddressInfo
  await new Promise((r) => probe.close(r))
  return `http://127.0.0.1:${port}`
}

describe('quotes', () => {
  it('GET /store/quote for N bytes gives what the 402 of an N-byte file gives', async () => {
    const data = randomBytes(150_000)
    const q = await fetch(`${gw.url}/store/quote?bytes=${data.length}`)
    const quote = await q.json()
    expect(q.status, JSON.stringify(quote)).toBe(200)
    const r = await post(gw.url, data)
    const body = await expectActionable402(r, null)
    expect(quote.accepts).toEqual(body.accepts)
    expect(quote.resource).toEqual(body.resource)
    expect(quote.extensions).toEqual(body.extensions)
    expect(quote.quote).toMatchObject({ size_bytes: data.length, amount: body.accepts[0].amount, valid_for_s: 300 })
    expect(quote.quote.valid_until).toBeGreaterThan(Date.now() / 1000)
    expect(decodeHeader(q, 'PAYMENT-REQUIRED').accepts).toEqual(body.accepts)
    expect(gw.validationErrors).toEqual([])
  })

  it('a payment made from a quote stores the file, without a 402 first', async () => {
    const data = randomBytes(4096)
    const q = await fetch(`${gw.url}/store/quote?bytes=${data.length}`)
    const client = payingClient(peers.base, 2)
    const required = client.getPaymentRequiredResponse((n) => q.headers.get(n), await q.json())
    const payload = await client.createPaymentPayload(required)
    const payer = anvilAccount(2).address
    const before = await balanceOf(peers.base, payer)
    const r = await post(gw.url, data, client.encodePaymentSignatureHeader(payload))
    const result = await r.json()
    expect(r.status, JSON.stringify(result)).toBe(200)
    expect(result.sha256).toBe(createHash('sha256').update(data).digest('hex'))
    expect(before - (await balanceOf(peers.base, payer))).toBe(BigInt(required.accepts[0]!.amount))
  })

  it('refuses a quote for 0 bytes with 400', async () => {
    const r = await fetch(`${gw.url}/store/quote?bytes=0`)
    expect(r.status).toBe(400)
  })
})

describe('every 402 is actionable', () => {
  it('the first 402 is the full x402 v2 body: resource, extensions with a valid Bazaar declaration', async () => {
    const r = await post(gw.url, randomBytes(64))
    const body = await expectActionable402(r, null)
    expect(body.resource).toEqual({ url: `${gw.url}/store`, description: 'Permanent storage of 64 bytes on Arweave', mimeType: 'application/octet-stream' })
    const bazaar = validateAndExtract(body.extensions.bazaar)
    expect(bazaar).toMatchObject({ valid: true, info: { input: { type: 'http', method: 'POST', bodyType: 'form-data' } } })
  })

  it('insufficient_amount, invalid_payment and an expired authorization each carry PAYMENT-REQUIRED', async () => {
    const data = randomBytes(2048)
    const first = await post(gw.url, data)
    const client = payingClient(peers.base, 3)
    const required = client.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
    // below the price
    const cheaper = { ...required, accepts: required.accepts.map((a) => ({ ...a, amount: String(BigInt(a.amount) - 1n) })) }
    const low = await client.createPaymentPayload(cheaper)
    const lowBody = await expectActionable402(await post(gw.url, data, client.encodePaymentSignatureHeader(low)), 'insufficient_amount')
    expect(lowBody.message).toContain('below the price')
    // a signature the facilitator rejects
    const good = await client.createPaymentPayload(required)
    const p = good.payload as { signature: string }
    const tampered = { ...good, payload: { ...good.payload, signature: p.signature.slice(0, -4) + (p.signature.endsWith('00') ? '1b01' : '1b00') } }
    await expectActionable402(await post(gw.url, data, client.encodePaymentSignatureHeader(tampered)), 'invalid_payment')
    // an authorization that has expired
    const auth = (good.payload as { authorization: Record<string, string> }).authorization
    const expired = { ...good, payload: { ...good.payload, authorization: { ...auth, validBefore: String(Math.floor(Date.now() / 1000) - 10) } } }
    const expiredBody = await expectActionable402(await post(gw.url, data, client.encodePaymentSignatureHeader(expired)), 'invalid_payment')
    expect(expiredBody.message).toContain('validBefore')
    // and the retry from the refusal's own PAYMENT-REQUIRED succeeds
    const again = await post(gw.url, data, client.encodePaymentSignatureHeader(await client.createPaymentPayload(required)))
    expect(again.status).toBe(200)
    expect(gw.validationErrors).toEqual([])
  })
})

describe('discovery', () => {
  it('announces the MCP tools this gateway serves: a storage-only gateway lists none of the receipt, model or chat tools', async () => {
    const doc = (await (await fetch(`${gw.url}/.well-known/x402`)).json()) as { mcp: { tools: { name: string }[] } }
    const listed = (await (await mcpRawPost(gw.url)('tools/list')).json()) as { result: { tools: { name: string }[] } }
    expect(doc.mcp.tools.map((tool) => tool.name)).toEqual(['quote_storage', 'store_file', 'verify_upload'])
    expect(doc.mcp.tools.map((tool) => tool.name)).toEqual(listed.result.tools.map((tool) => tool.name))
    expect(gw.validationErrors).toEqual([])
  })

  it('GET /.well-known/x402 (public) lists /store with its rails and price rule', async () => {
    const r = await fetch(`${gw.url}/.well-known/x402`)
    const doc = await r.json()
    expect(r.status, JSON.stringify(doc)).toBe(200)
    // …and the MCP endpoint, whose tools are listed apart (`mcp`, tests/mcp/mcp.integration.test.ts)
    expect(doc.resources).toEqual([`${gw.url}/store`, `${gw.url}/mcp`])
    const item = doc.items[0]
    expect(item).toMatchObject({ resource: `${gw.url}/store`, method: 'POST', x402Versions: [1, 2], v1Networks: ['base'] })
    expect(item.accepts.map((a: { network: string; asset: string }) => [a.network, a.asset])).toEqual([
      ['eip155:8453', peers.base.tokenAddress],
      ['eip155:1', peers.mainnet.tokenAddress],
      ['algorand:devnet-genesis-for-evm-tests', '31566704'],
    ])
    // the rule's example is what a quote for 1 MiB says
    const q = await (await fetch(`${gw.url}/store/quote?bytes=1048576`)).json()
    expect(item.price.example).toEqual({ size_bytes: 1_048_576, amount: q.quote.amount })
    expect(validateAndExtract(item.extensions.bazaar).valid).toBe(true)
  })
})

describe('x402 version 1', () => {
  /**
   * A v1 client as users run one today: the stock @x402/fetch with `registerExactEvmScheme`, which also
   * registers the v1 scheme (`ExactEvmSchemeV1`) for the v1 network names (`base`, …), default spend
   * controls. (The v1-only package `x402-fetch` speaks the same wire format; it is no longer installed:
   * its `x402` dependency alone pulled ~110 MB, README "Install size".)
   */
  const v1Fetch = (index: number) => {
    const client = new x402Client()
    registerExactEvmScheme(client, { signer: privateKeyToAccount(anvilAccount(index).privateKey) })
    return wrapFetchWithPayment(fetch, client)
  }

  it('the stock client pays POST /store?x402Version=1 with a v1 X-PAYMENT and reads X-PAYMENT-RESPONSE', async () => {
    const data = randomBytes(3000)
    const payer = anvilAccount(4).address
    const before = await balanceOf(peers.base, payer)
    const sent: string[] = []
    const spy: typeof fetch = async (input, init) => {
      const headers = new Headers(input instanceof Request ? input.headers : init?.headers)
      if (headers.has('X-PAYMENT')) sent.push(headers.get('X-PAYMENT')!)
      return fetch(input, init)
    }
    const client = new x402Client()
    registerExactEvmScheme(client, { signer: privateKeyToAccount(anvilAccount(4).privateKey) })
    const r = await wrapFetchWithPayment(spy, client)(`${gw.url}/store?x402Version=1`, { method: 'POST', body: multipart(data) })
    const result = await r.json()
    expect(r.status, JSON.stringify(result)).toBe(200)
    expect(result.sha256).toBe(createHash('sha256').update(data).digest('hex'))
    // a v1 payload: x402Version 1 and the v1 network name, in the v1 header
    expect(sent).toHaveLength(1)
    expect(JSON.parse(Buffer.from(sent[0]!, 'base64').toString())).toMatchObject({ x402Version: 1, scheme: 'exact', network: 'base' })
    const settle = decodePaymentResponseHeader(r.headers.get('X-PAYMENT-RESPONSE')!)
    expect(settle).toMatchObject({ success: true, network: 'base', transaction: result.settlement.transaction })
    const paid = before - (await balanceOf(peers.base, payer))
    expect(paid).toBeGreaterThan(0n)
    const deposit = await gw.ledger.db.selectFrom('storage_deposits').selectAll().where('tx_hash', '=', result.settlement.transaction).executeTakeFirstOrThrow()
    expect(deposit).toMatchObject({ network: 'eip155:8453', amount_atomic: paid.toString(), pay_to: PAY_TO_EVM })
    expect(gw.validationErrors).toEqual([])
  })

  it('the same client pays the default (v2) 402 of POST /store on eip155:8453', async () => {
    const r = await v1Fetch(4)(`${gw.url}/store`, { method: 'POST', body: multipart(randomBytes(100)) })
    const body = await r.json()
    expect(r.status, JSON.stringify(body)).toBe(200)
    expect(body.settlement).toMatchObject({ network: 'eip155:8453' })
  })

  it('a v1 402 lists only `base`, with error a string, and PAYMENT-REQUIRED', async () => {
    const r = await fetch(`${gw.url}/store?x402Version=1`, { method: 'POST', body: multipart(randomBytes(10)) })
    const body = await r.json()
    expect(r.status).toBe(402)
    expect(body).toMatchObject({ x402Version: 1, error: 'X-PAYMENT header is required' })
    expect(body.accepts.map((a: { network: string }) => a.network)).toEqual(['base'])
    expect(decodeHeader(r, 'PAYMENT-REQUIRED')).toEqual(body)
  })
})

describe('upstream credit', () => {
  it('drained: 503 before any settlement; the automatic top-up from own funds; then it stores again', async () => {
    const funder = anvilAccount(5)
    const credited = await startAppGateway(
      { ...evmEnv(peers), SERVICE_STORAGE__TOPUP_KEY: funder.privateKey, SERVICE_STORAGE__TOPUP_RPC_URL: peers.base.url, SERVICE_STORAGE__TOPUP_AMOUNT_ATOMIC: '10000000' },
      peers.dir,
    )
    try {
      const address = arweaveAddress(peers.jwk)
      const store = peers.upstream.store
      expect(store.debit(address, store.balance(address)!)).toBe(true)
      expect(store.balance(address)).toBe(0n)
      const data = randomBytes(150_000)
      // a paying client is refused before anything is verified or settled (the quote of 1 byte needs no credit)
      const qr = await fetch(`${credited.url}/store/quote?bytes=1`)
      const client = payingClient(peers.base, 3)
      const required = client.getPaymentRequiredResponse((n) => qr.headers.get(n), await qr.json())
      const sized = { ...required, accepts: required.accepts.map((a) => ({ ...a, amount: '100000' })) }
      const payload = await client.createPaymentPayload(sized)
      const payer = anvilAccount(3).address
      const before = await balanceOf(peers.base, payer)
      const paid = await post(credited.url, data, client.encodePaymentSignatureHeader(payload))
      const refused = await paid.json()
      expect(paid.status, JSON.stringify(refused)).toBe(503)
      expect(refused).toMatchObject({ error: 'upstream_credit_insufficient', details: { balance_winc: '0' } })
      expect(await balanceOf(peers.base, payer)).toBe(before)
      const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce
      expect(await credited.ledger.db.selectFrom('storage_deposits').selectAll().where('nonce', '=', nonce.toLowerCase()).execute()).toEqual([])
      // the refusal started a top-up: USDC from the service's own key to the upstream's deposit address
      await credited.service.credit.maintain()
      expect(store.balance(address)! >= 10n ** 12n).toBe(true)
      expect(await balanceOf(peers.base, TOP_UP_DEPOSIT)).toBeGreaterThanOrEqual(10_000_000n)
      const events = await credited.services.catalogue.recent({ kind: 'storage.upstream.credit_low' })
      expect(events.length).toBeGreaterThan(0)
      expect((await credited.services.catalogue.recent({ kind: 'storage.upstream.topped_up' })).length).toBeGreaterThan(0)
      const metrics = await credited.services.metricsText()
      expect(metrics).toMatch(/storage_upstream_topups_total [1-9]/)
      expect(metrics).toMatch(/storage_upstream_balance_winc [1-9]/)
      // the same payment now goes through
      const again = await post(credited.url, data, client.encodePaymentSignatureHeader(payload))
      const stored = await again.json()
      expect(again.status, JSON.stringify(stored)).toBe(200)
      expect(before - (await balanceOf(peers.base, payer))).toBe(100_000n)
      // /health/detailed reports upstream, facilitator, algod and the balance
      const health = await credited.services.healthChecks!.upstream_credit!()
      expect(health).toMatchObject({ status: 'ok', top_up: true })
      expect(credited.validationErrors).toEqual([])
    } finally {
      await credited.close()
    }
  }, 60_000)
})

describe('facilitator failover', () => {
  it('with the first facilitator down, payments go through the second; health names the one down', async () => {
    const dead = await deadUrl()
    const failover = await startAppGateway({ ...evmEnv(peers), SERVICE_X402__FACILITATOR_URL: dead, SERVICE_X402__FALLBACK_FACILITATOR_URL: peers.facilitator.url }, peers.dir)
    try {
      const data = randomBytes(5000)
      const first = await post(failover.url, data)
      const client = payingClient(peers.mainnet, 5)
      const required = client.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
      const r = await post(failover.url, data, client.encodePaymentSignatureHeader(await client.createPaymentPayload(required)))
      const body = await r.json()
      expect(r.status, JSON.stringify(body)).toBe(200)
      expect(body.settlement).toMatchObject({ success: true, network: 'eip155:1' })
      expect(await failover.services.metricsText()).toMatch(/x402_facilitator_failovers_total\{step="verify"\} 1/)
      const check = await failover.services.healthChecks!.facilitator!()
      expect(check).toEqual({ detail: `down: ${dead}` })
    } finally {
      await failover.close()
    }
  })
})
