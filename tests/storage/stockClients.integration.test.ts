/**
 * The stock x402 clients with their default settings (no spend controls, no asset list) pay `/store` on
 * both EVM rails of the devnet: the devnet USDC sits at the canonical USDC addresses, and the gateway's
 * asset defaults are those addresses (no SERVICE_X402__ASSET__* in its environment here).
 */
import { randomBytes } from 'node:crypto'
import { x402Client as axiosX402Client, wrapAxiosWithPayment } from '@x402/axios'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { decodePaymentResponseHeader, wrapFetchWithPaymentFromConfig } from '@x402/fetch'
import axios from 'axios'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { usdcArtifact, type LocalChain } from '../../devnet/chains/startChain.js'
import { evmEnv, type EvmPeers, multipart, PAY_TO_EVM, startAppGateway, startEvmPeers, type TestGateway } from './harness.js'

let peers: EvmPeers
let gw: TestGateway & { validationErrors: unknown[] }
beforeAll(async () => {
  peers = await startEvmPeers()
  const env = evmEnv(peers)
  delete env.SERVICE_X402__ASSET__EIP155_8453
  delete env.SERVICE_X402__ASSET__EIP155_1
  gw = await startAppGateway(env, peers.dir)
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await peers?.close()
})

const balanceOf = (chain: LocalChain, who: `0x${string}`) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({
    address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who],
  }) as Promise<bigint>

const rails = [
  { name: 'Base', which: 'base', network: 'eip155:8453', payer: 4 },
  { name: 'Ethereum', which: 'mainnet', network: 'eip155:1', payer: 5 },
] as const

describe('stock x402 clients with default settings pay /store', () => {
  it('the quote names the canonical USDC on both EVM rails', async () => {
    const r = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(new TextEncoder().encode('quote me')) })
    expect(r.status).toBe(402)
    const accepts = ((await r.json()) as { accepts: { network: string; asset: string; extra: unknown }[] }).accepts
    expect(accepts.slice(0, 2).map((a) => [a.network, a.asset, a.extra])).toEqual([
      ['eip155:8453', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', { name: 'USD Coin', version: '2' }],
      ['eip155:1', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', { name: 'USD Coin', version: '2' }],
    ])
  })

  for (const rail of rails) {
    it(`@x402/fetch pays on ${rail.name} (${rail.network})`, async () => {
      const chain = peers[rail.which]
      const account = privateKeyToAccount(anvilAccount(rail.payer).privateKey)
      const paidFetch = wrapFetchWithPaymentFromConfig(fetch, {
        schemes: [{ network: rail.network, client: new ExactEvmScheme(toClientEvmSigner(account)) }],
      })
      const data = randomBytes(120_000)
      const before = await balanceOf(chain, account.address)
      const payToBefore = await balanceOf(chain, PAY_TO_EVM)
      const res = await paidFetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
      const body = (await res.json()) as { arTxId: string; sizeBytes: number; price: { network?: string } }
      expect(res.status, JSON.stringify(body)).toBe(200)
      expect(body.sizeBytes).toBe(data.length)
      const settled = decodePaymentResponseHeader(res.headers.get('payment-response')!) as unknown as { arTxId: string }
      expect(settled.arTxId).toBe(body.arTxId)
      const paid = before - (await balanceOf(chain, account.address))
      expect(paid).toBeGreaterThan(0n)
      expect((await balanceOf(chain, PAY_TO_EVM)) - payToBefore).toBe(paid)
      expect(gw.validationErrors).toEqual([])
    })

    it(`@x402/axios pays on ${rail.name} (${rail.network})`, async () => {
      const chain = peers[rail.which]
      const account = privateKeyToAccount(anvilAccount(rail.payer).privateKey)
      const client = new axiosX402Client().register(rail.network, new ExactEvmScheme(toClientEvmSigner(account)))
      const api = wrapAxiosWithPayment(axios.create(), client) // axios defaults: a 402 rejects, which is what the interceptor answers
      const before = await balanceOf(chain, account.address)
      const data = randomBytes(110_000)
      const res = await api.post(`${gw.url}/store`, multipart(data))
      expect(res.status, JSON.stringify(res.data)).toBe(200)
      expect(res.data.sizeBytes).toBe(data.length)
      expect(before - (await balanceOf(chain, account.address))).toBeGreaterThan(0n)
      expect(gw.validationErrors).toEqual([])
    })
  }
})
