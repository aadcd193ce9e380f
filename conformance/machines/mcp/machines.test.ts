/**
 * Machine `mcp-payment` through the conformance runner (driver `mcp-payment`) against the live
 * gateway app on the devnet (local Base, local chain 1) with the `chain` hook (an x402 reference payer per
 * EVM network), and without it: the paying rows are skipped with the reason, never passed.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../../devnet/accounts.js'
import type { LocalChain } from '../../../devnet/chains/startChain.js'
import { batchPlugin } from '../../../src/handlers/batch/plugin.js'
import { llmPlugin } from '../../../src/handlers/llm/plugin.js'
import { storagePlugin } from '../../../src/handlers/storage/plugin.js'
import { evmEnv, type EvmPeers, startAppGateway, startEvmPeers } from '../../../tests/storage/harness.js'
import { formatText } from '../../report.js'
import { loadMachine, runMachine } from '../../runner.js'
import type { Payer, Target } from '../../types.js'

let peers: EvmPeers
let gw: Awaited<ReturnType<typeof startAppGateway>>

beforeAll(async () => {
  peers = await startEvmPeers()
  // the domains whose MCP tools the machine lists: storage, the receipt batch and /llm
  gw = await startAppGateway(evmEnv(peers), peers.dir, { start: true, domains: [storagePlugin, batchPlugin, llmPlugin] })
}, 120_000)
afterAll(async () => {
  await gw?.close()
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

describe('machine mcp-payment on the devnet gateway', () => {
  it('every row holds on eip155:8453 and eip155:1', async () => {
    const target: Target = { urls: { gateway: gw.url }, keys: {}, hooks: { chain: { payers: { 'eip155:8453': evmPayer(peers.base, 4), 'eip155:1': evmPayer(peers.mainnet, 5) } } } }
    const results = await runMachine(loadMachine('mcp-payment'), target)
    expect(results.filter((r) => r.outcome !== 'passed'), formatText(results)).toEqual([])
    expect(results.map((r) => `${r.id}${r.variant ? `@${r.variant}` : ''}`)).toHaveLength(2 + 5 * 2)
    expect(gw.validationErrors).toEqual([])
  }, 180_000)

  it('without the chain hook, the paying rows are skipped with the reason, never passed', async () => {
    const results = await runMachine(loadMachine('mcp-payment'), { urls: { gateway: gw.url }, keys: {}, hooks: {} })
    expect(results.filter((r) => r.outcome === 'passed').map((r) => r.id)).toEqual(['mcp-1', 'mcp-2'])
    expect(results.filter((r) => r.outcome === 'failed'), formatText(results)).toEqual([])
    expect(results.find((r) => r.id === 'mcp-3')!.reason).toMatch(/chain/)
  }, 60_000)
})
