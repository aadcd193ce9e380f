/**
 * Machine 3.5 through the conformance runner (driver `paid-storage`) against the live gateway app on the
 * devnet (local Base, local chain 1, devnet algod) with the `chain` hook (a payer per network) and the
 * `faults` hook (the devnet upstream's fail/recover), and its mock rows against the Prism mock.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import algosdk from 'algosdk'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../../devnet/accounts.js'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from '../../../devnet/algod/algoAccounts.js'
import { startAlgod, type AlgodPeer } from '../../../devnet/algod/startAlgod.js'
import type { LocalChain } from '../../../devnet/chains/startChain.js'
import { freePort, startPrism, type PrismMock } from '../../../scripts/mock.js'
import { evmEnv, type EvmPeers, startAppGateway, startEvmPeers } from '../../../tests/storage/harness.js'
import { algorandPayer } from '../../algorandPayer.js'
import { formatText } from '../../report.js'
import { loadMachine, runMachine } from '../../runner.js'
import type { Payer, Target } from '../../types.js'

const TOKEN = 'd'.repeat(64)
let peers: EvmPeers
let node: AlgodPeer
let gw: Awaited<ReturnType<typeof startAppGateway>>
const service = algosdk.generateAccount()
const algoPayer = algoTestAccount(3)

beforeAll(async () => {
  peers = await startEvmPeers()
  node = await startAlgod({
    token: TOKEN, roundIntervalMs: 200, assetCreator: algoTestAccount(0).address,
    accounts: [
      { address: algoPayer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC },
      { address: service.addr.toString(), microAlgos: 1_000_000n, usdc: 0n },
    ],
  })
  const env = { ...evmEnv(peers), SERVICE_ALGOD__URL: node.url, SERVICE_ALGOD__TOKEN: TOKEN, SERVICE_X402__PAY_TO_ALGORAND: service.addr.toString(), SERVICE_ALGOD__POLL_INTERVAL_MS: '200' }
  delete (env as Record<string, string>).SERVICE_ALGOD__GENESIS_HASH
  gw = await startAppGateway(env, peers.dir, { start: true })
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await node?.close()
  await peers?.close()
})

function evmPayer(chain: LocalChain, index: number): Payer {
  const client = new x402HTTPClient(
    new x402Client((_v, accepts) => accepts[0]!)
      .register('eip155:*', new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(anvilAccount(index).privateKey), createPublicClient({ chain: chain.chain, transport: http(chain.url) }))))
      .setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.tokenAddress }] }),
  )
  return async (req) => {
    const payload = await client.createPaymentPayload({ x402Version: 2, resource: { url: req.resource, description: req.description, mimeType: req.mimeType }, accepts: [req as never] })
    return client.encodePaymentSignatureHeader(payload)['PAYMENT-SIGNATURE']!
  }
}

async function upstream(what: 'fail' | 'recover'): Promise<void> {
  const r = await fetch(`http://127.0.0.1:${peers.upstreamPort}/__devnet/${what}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: what === 'fail' ? JSON.stringify({ scope: 'uploads', status: 503 }) : '{}',
  })
  if (!r.ok) throw new Error(`upstream ${what} hook answered ${r.status}`)
}

describe('machine 3.5 (paid-storage request) on the devnet gateway', () => {
  it('every row holds on eip155:8453, eip155:1 and algorand', async () => {
    const target: Target = {
      urls: { gateway: gw.url },
      keys: {},
      hooks: {
        chain: { payers: { 'eip155:8453': evmPayer(peers.base, 2), 'eip155:1': evmPayer(peers.mainnet, 3), 'algorand:*': algorandPayer({ algodUrl: node.url, algodToken: TOKEN, mnemonic: algoPayer.mnemonic }) } },
        faults: { upstream },
      },
    }
    const results = await runMachine(loadMachine('paid-storage-request'), target)
    expect(results.filter((r) => r.outcome !== 'passed'), formatText(results)).toEqual([])
    expect(new Set(results.map((r) => r.id))).toEqual(new Set(['3.5-1', '3.5-2', '3.5-3', '3.5-4', '3.5-5', '3.5-5r', '3.5-r1', '3.5-r2', '3.5-r3', '3.5-r4']))
    expect(results.filter((r) => r.variant === 'algorand:*')).toHaveLength(6)
    expect(gw.validationErrors).toEqual([])
  }, 180_000)

  it('without the hooks, the paying and failing rows are skipped with the reason, never passed', async () => {
    const results = await runMachine(loadMachine('paid-storage-request'), { urls: { gateway: gw.url }, keys: {}, hooks: {} }, { rows: ['3.5-2', '3.5-3', '3.5-5', '3.5-5r'] })
    expect(results.filter((r) => r.outcome === 'passed').map((r) => r.id)).toEqual(['3.5-2'])
    expect(new Set(results.filter((r) => r.outcome === 'skipped').map((r) => r.id))).toEqual(new Set(['3.5-3', '3.5-5', '3.5-5r']))
    expect(results.find((r) => r.id === '3.5-5')!.reason).toMatch(/chain, faults/)
  }, 60_000)
})

describe('machine 3.5 on the Prism mock', () => {
  let prism: PrismMock | undefined
  afterAll(async () => prism?.stop())
  it('the quote row answers 402 with three requirements in order and PAYMENT-REQUIRED; the others are skipped', async () => {
    prism = await startPrism('openapi/gateway.yaml', await freePort())
    const results = await runMachine(loadMachine('paid-storage-request'), { urls: { gateway: prism.url }, mock: true, keys: {}, hooks: {} })
    expect(results.filter((r) => r.outcome === 'passed').map((r) => r.id)).toEqual(['3.5-2'])
    expect(results.filter((r) => r.outcome === 'failed'), formatText(results)).toEqual([])
  }, 60_000)
})
