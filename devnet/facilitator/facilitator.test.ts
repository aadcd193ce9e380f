import { x402Client } from '@x402/core/client'
import type { Network, PaymentRequired, PaymentRequirements } from '@x402/core/types'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX } from '../accounts.js'
import { startChain, usdcArtifact, type LocalChain } from '../chains/startChain.js'
import { startFacilitator, type FacilitatorPeer } from './startFacilitator.js'

const TOKEN = 'test-facilitator-token'
const payTo = '0x000000000000000000000000000000000000dEaD' as const
/** Fresh payers (USDC only, no ETH: EIP-3009 payers never pay gas) for the concurrency test. */
const concurrentPayers = Array.from({ length: 5 }, () => privateKeyToAccount(generatePrivateKey()))

describe('devnet facilitator on local Base', () => {
  let base: LocalChain
  let fac: FacilitatorPeer
  beforeAll(async () => {
    base = await startChain({
      chainId: 8453,
      fund: concurrentPayers.map((a) => ({ address: a.address, amount: 1_000_000_000n })),
    })
    fac = await startFacilitator({
      token: TOKEN,
      chains: [{ chainId: 8453, rpcUrl: base.url }],
      signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey,
    })
  })
  afterAll(async () => {
    await fac?.close()
    await base?.close()
  })

  // The devnet USDC is at the canonical address, a default asset; stock clients cap a payment at $1 by
  // default, and these tests pay up to 1.234567 USDC: raise the cap for this asset.
  const payingClient = (signer: ReturnType<typeof toClientEvmSigner>) =>
    new x402Client()
      .register('eip155:*', new ExactEvmScheme(signer))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: base.tokenAddress, maxAmountPerPayment: '10000000' }] })

  const post = (path: string, body: unknown, token: string | null = TOKEN) =>
    fetch(`${fac.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    })

  it('requires the bearer token', async () => {
    expect((await fetch(`${fac.url}/supported`)).status).toBe(401)
    expect((await fetch(`${fac.url}/supported`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401)
    expect((await post('/verify', {}, null)).status).toBe(401)
    const ok = await fetch(`${fac.url}/supported`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(ok.status).toBe(200)
    const body = (await ok.json()) as { kinds: { x402Version: number; scheme: string; network: string }[] }
    expect(body.kinds).toContainEqual(expect.objectContaining({ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }))
  })

  it('a reference x402 client pays; balance drops by exactly the amount; a replay fails', async () => {
    const payer = anvilAccount(2)
    const pub = createPublicClient({ chain: base.chain, transport: http(base.url) })
    const signer = toClientEvmSigner(privateKeyToAccount(payer.privateKey), pub)
    const client = payingClient(signer)

    const requirement: PaymentRequirements = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '1234567',
      asset: base.tokenAddress,
      payTo,
      maxTimeoutSeconds: 60,
      extra: { name: 'USD Coin', version: '2' },
    }
    const paymentRequired: PaymentRequired = {
      x402Version: 2,
      resource: { url: 'http://127.0.0.1/store', description: 'test', mimeType: 'application/octet-stream' },
      accepts: [requirement],
    }
    const paymentPayload = await client.createPaymentPayload(paymentRequired)
    const abi = usdcArtifact().abi
    const balance = (a: `0x${string}`) =>
      pub.readContract({ address: base.tokenAddress, abi, functionName: 'balanceOf', args: [a] }) as Promise<bigint>
    const before = await balance(payer.address)
    const payToBefore = await balance(payTo)

    const body = { x402Version: 2, paymentPayload, paymentRequirements: requirement }
    const v = (await (await post('/verify', body)).json()) as { isValid: boolean; payer: string }
    expect(v).toMatchObject({ isValid: true })
    expect(v.payer.toLowerCase()).toBe(payer.address.toLowerCase())

    const sres = await post('/settle', body)
    expect(sres.status).toBe(200)
    const s = (await sres.json()) as { success: boolean; transaction: string; network: string }
    expect(s.success).toBe(true)
    expect(s.network).toBe('eip155:8453')
    expect(s.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    expect(before - (await balance(payer.address))).toBe(1234567n)
    expect((await balance(payTo)) - payToBefore).toBe(1234567n)

    const nonce = (paymentPayload.payload as { authorization: { nonce: `0x${string}` } }).authorization.nonce
    expect(
      await pub.readContract({ address: base.tokenAddress, abi, functionName: 'authorizationState', args: [payer.address, nonce] }),
    ).toBe(true)

    // Replay: verify and settle both refuse; the balance does not move again.
    const v2 = (await (await post('/verify', body)).json()) as { isValid: boolean; invalidReason: string }
    expect(v2.isValid).toBe(false)
    const s2 = (await (await post('/settle', body)).json()) as { success: boolean; errorReason: string }
    expect(s2.success).toBe(false)
    expect(before - (await balance(payer.address))).toBe(1234567n)
  })

  it('a stock x402 v1 client pays on the v1 network name `base`', async () => {
    const payer = anvilAccount(5)
    const pub = createPublicClient({ chain: base.chain, transport: http(base.url) })
    const client = new x402Client()
      .registerV1('base' as Network, new ExactEvmSchemeV1(toClientEvmSigner(privateKeyToAccount(payer.privateKey), pub)))
      .setSpendControls({ allowedAssets: [{ network: 'base' as Network, asset: base.tokenAddress }] })
    const requirement = {
      scheme: 'exact', network: 'base', maxAmountRequired: '777', resource: 'http://x/store', description: '1 byte',
      mimeType: 'application/octet-stream', payTo, maxTimeoutSeconds: 60, asset: base.tokenAddress,
      extra: { name: 'USD Coin', version: '2' },
    }
    const paymentPayload = await client.createPaymentPayload({ x402Version: 1, accepts: [requirement] } as never)
    expect(paymentPayload.x402Version).toBe(1)
    const body = { x402Version: 1, paymentPayload, paymentRequirements: requirement }
    expect(((await (await post('/verify', body)).json()) as { isValid: boolean }).isValid).toBe(true)
    const s = (await (await post('/settle', body)).json()) as { success: boolean; network: string }
    expect(s).toMatchObject({ success: true, network: 'base' })
    expect(((await (await post('/settle', body)).json()) as { success: boolean }).success).toBe(false)
  })

  it('concurrent settles of one authorization settle once', async () => {
    const payer = anvilAccount(3)
    const pub = createPublicClient({ chain: base.chain, transport: http(base.url) })
    const client = payingClient(toClientEvmSigner(privateKeyToAccount(payer.privateKey), pub))
    const requirement: PaymentRequirements = {
      scheme: 'exact', network: 'eip155:8453', amount: '5000', asset: base.tokenAddress, payTo,
      maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' },
    }
    const paymentPayload = await client.createPaymentPayload({
      x402Version: 2, resource: { url: 'http://x/store', description: 'd', mimeType: 'application/octet-stream' }, accepts: [requirement],
    })
    const body = { x402Version: 2, paymentPayload, paymentRequirements: requirement }
    const results = (await Promise.all(Array.from({ length: 5 }, async () => (await post('/settle', body)).json()))) as { success: boolean }[]
    expect(results.filter((r) => r.success)).toHaveLength(1)
  })

  it('concurrent settles by different payers all succeed (one signer nonce sequence per chain)', async () => {
    const pub = createPublicClient({ chain: base.chain, transport: http(base.url) })
    const abi = usdcArtifact().abi
    const balance = (a: `0x${string}`) =>
      pub.readContract({ address: base.tokenAddress, abi, functionName: 'balanceOf', args: [a] }) as Promise<bigint>
    const bodies = await Promise.all(
      concurrentPayers.map(async (account, i) => {
        const requirement: PaymentRequirements = {
          scheme: 'exact', network: 'eip155:8453', amount: String(10_000 + i), asset: base.tokenAddress, payTo,
          maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' },
        }
        const paymentPayload = await payingClient(toClientEvmSigner(account, pub)).createPaymentPayload({
          x402Version: 2, resource: { url: 'http://x/store', description: 'd', mimeType: 'application/octet-stream' }, accepts: [requirement],
        })
        return { x402Version: 2, paymentPayload, paymentRequirements: requirement }
      }),
    )
    const before = await Promise.all(concurrentPayers.map((a) => balance(a.address)))
    const payToBefore = await balance(payTo)
    // Twice, so the second round also starts from a signer nonce the facilitator has already used.
    for (const round of [0, 1]) {
      const batch = round === 0 ? bodies : await Promise.all(
        concurrentPayers.map(async (account, i) => {
          const requirement = { ...bodies[i]!.paymentRequirements }
          const paymentPayload = await payingClient(toClientEvmSigner(account, pub)).createPaymentPayload({
            x402Version: 2, resource: { url: 'http://x/store', description: 'd', mimeType: 'application/octet-stream' }, accepts: [requirement],
          })
          return { x402Version: 2, paymentPayload, paymentRequirements: requirement }
        }),
      )
      const results = await Promise.all(
        batch.map(async (b) => {
          const r = await post('/settle', b)
          return { status: r.status, body: (await r.json()) as { success: boolean; transaction: string; errorMessage?: string } }
        }),
      )
      for (const r of results) expect(r, JSON.stringify(r.body)).toMatchObject({ status: 200, body: { success: true } })
      expect(new Set(results.map((r) => r.body.transaction)).size).toBe(5)
    }
    const after = await Promise.all(concurrentPayers.map((a) => balance(a.address)))
    after.forEach((b, i) => expect(before[i]! - b).toBe(2n * BigInt(10_000 + i)))
    expect((await balance(payTo)) - payToBefore).toBe(2n * (5n * 10_000n + 10n))
  })

  it('rejects a tampered signature and a malformed body', async () => {
    const payer = anvilAccount(4)
    const pub = createPublicClient({ chain: base.chain, transport: http(base.url) })
    const client = payingClient(toClientEvmSigner(privateKeyToAccount(payer.privateKey), pub))
    const requirement: PaymentRequirements = {
      scheme: 'exact', network: 'eip155:8453', amount: '100', asset: base.tokenAddress, payTo,
      maxTimeoutSeconds: 60, extra: { name: 'USD Coin', version: '2' },
    }
    const paymentPayload = await client.createPaymentPayload({
      x402Version: 2, resource: { url: 'http://x/store', description: 'd', mimeType: 'application/octet-stream' }, accepts: [requirement],
    })
    const p = paymentPayload.payload as { authorization: { value: string } }
    p.authorization.value = '99999' // signed for 100
    const v = (await (await post('/verify', { x402Version: 2, paymentPayload, paymentRequirements: requirement })).json()) as { isValid: boolean }
    expect(v.isValid).toBe(false)
    expect((await post('/verify', { x402Version: 2 })).status).toBe(400)
  })
})
