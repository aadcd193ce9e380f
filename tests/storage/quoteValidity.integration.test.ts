/**
 * A quote used past its validity (docs/security.md "Money paths"), played by a payer against the
 * devnet peers (Anvil with the EIP-3009 USDC, the facilitator, the storage upstream whose price rises) through
 * the real gateway app (OpenAPI routing, response validation `error`). `GET /store/quote` holds its price for
 * `SERVICE_STORAGE__QUOTE_VALIDITY_S` (8 s here: quote, price rise and a paid upload took 2.4 s on a loaded
 * two-core machine, past an earlier 2 s; the upstream's rates are read for every price,
 * `SERVICE_STORAGE__RATE_CACHE_MS=0`): paid within it, the quoted amount buys the upload although the price
 * rose; paid after it, the quoted amount is refused with 402 `insufficient_amount` and the current requirements.
 */
import { randomBytes } from 'node:crypto'
import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { type LocalChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { evmEnv, type EvmPeers, multipart, PAY_TO_EVM, payingClient, startAppGateway, startEvmPeers } from './harness.js'

const VALIDITY_S = 8
const PAYER = 4
const SIZE = 150_000

let peers: EvmPeers
let gw: Awaited<ReturnType<typeof startAppGateway>>
let usdPerGiB: number

beforeAll(async () => {
  peers = await startEvmPeers()
  usdPerGiB = peers.upstream.pricing.fiat.usd!
  gw = await startAppGateway({ ...evmEnv(peers), SERVICE_STORAGE__QUOTE_VALIDITY_S: String(VALIDITY_S), SERVICE_STORAGE__RATE_CACHE_MS: '0' }, peers.dir)
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await peers?.close()
})
beforeEach(() => {
  peers.upstream.pricing.fiat.usd = usdPerGiB
})

const balanceOf = (chain: LocalChain, who: `0x${string}`) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({
    address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who],
  }) as Promise<bigint>

type Quote = { accepts: { network: string; amount: string }[]; quote: { amount: string; valid_until: number; valid_for_s: number } }

/** `GET /store/quote` for `SIZE` bytes, and a stock x402 client's payment of exactly the quoted amount on Base. */
async function quoteAndSign(): Promise<{ quote: Quote; header: Record<string, string>; receivedAt: number }> {
  const q = await fetch(`${gw.url}/store/quote?bytes=${SIZE}`)
  const receivedAt = Date.now()
  const quote = (await q.clone().json()) as Quote
  expect(q.status, JSON.stringify(quote)).toBe(200)
  expect(quote.quote.valid_for_s).toBe(VALIDITY_S)
  const client = payingClient(peers.base, PAYER)
  const required = client.getPaymentRequiredResponse((n) => q.headers.get(n), await q.json())
  const header = client.encodePaymentSignatureHeader(await client.createPaymentPayload(required))
  return { quote, header, receivedAt }
}

/** The upstream's price doubles; the gateway's current quote shows it. */
async function priceRises(quoted: Quote): Promise<bigint> {
  peers.upstream.pricing.fiat.usd = usdPerGiB * 2
  const now = (await (await fetch(`${gw.url}/store/quote?bytes=${SIZE}`)).json()) as Quote
  expect(BigInt(now.quote.amount)).toBeGreaterThan(BigInt(quoted.quote.amount))
  return BigInt(now.quote.amount)
}

const store = (data: Uint8Array, headers: Record<string, string>) => fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers })

describe('a quote and its validity (attacker: a payer holding an old quote)', () => {
  it('within its validity the quoted amount buys the upload although the upstream price rose', async () => {
    const { quote, header, receivedAt } = await quoteAndSign()
    await priceRises(quote)
    const before = await balanceOf(peers.base, anvilAccount(PAYER).address)
    const r = await store(randomBytes(SIZE), header)
    expect(Date.now() - receivedAt).toBeLessThan(VALIDITY_S * 1000)
    expect(r.status, await r.clone().text()).toBe(200)
    expect(before - (await balanceOf(peers.base, anvilAccount(PAYER).address))).toBe(BigInt(quote.quote.amount))
    expect(gw.validationErrors).toEqual([])
  })

  it('past its validity the quoted amount is refused 402 insufficient_amount with the current requirements; nothing moves', async () => {
    const { quote, header, receivedAt } = await quoteAndSign()
    const current = await priceRises(quote)
    await new Promise((r) => setTimeout(r, VALIDITY_S * 1000 + 1_000 - (Date.now() - receivedAt)))
    expect(Date.now() / 1000).toBeGreaterThan(quote.quote.valid_until + 1)
    const payer = anvilAccount(PAYER).address
    const before = [await balanceOf(peers.base, payer), await balanceOf(peers.base, PAY_TO_EVM)]
    const data = randomBytes(SIZE)
    const r = await store(data, header)
    const body = (await r.json()) as { error: string; message: string; accepts: { network: string; amount: string }[] }
    expect(r.status, JSON.stringify(body)).toBe(402)
    expect(body.error).toBe('insufficient_amount')
    expect(body.accepts.map((a) => BigInt(a.amount))).toEqual(body.accepts.map(() => current))
    expect(JSON.parse(Buffer.from(r.headers.get('payment-required')!, 'base64').toString())).toEqual(body)
    expect([await balanceOf(peers.base, payer), await balanceOf(peers.base, PAY_TO_EVM)]).toEqual(before)
    // …and those requirements are the way on: paid at the current price, the same file is stored
    const client = payingClient(peers.base, PAYER)
    const required = client.getPaymentRequiredResponse((n) => r.headers.get(n), body)
    const paid = await store(data, client.encodePaymentSignatureHeader(await client.createPaymentPayload(required)))
    expect(paid.status, await paid.clone().text()).toBe(200)
    expect(before[0]! - (await balanceOf(peers.base, payer))).toBe(current)
    expect(gw.validationErrors).toEqual([])
  })
})
