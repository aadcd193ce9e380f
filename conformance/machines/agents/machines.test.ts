/**
 * Machines `mcp-2026`, `batch-settlement` and `sign-in-with-x` (the agents' protocols) through the conformance
 * runner against the live gateway app on the devnet (local Base with x402's escrow, the facilitator, a stand-in
 * model server), with batch-settlement and the overlord tier configured, and a target that has the payer key, the
 * overlord key and the chain's RPC: every row holds (the paying lifecycle and the signed proofs included), and
 * every response matches the document.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { anvilAccount, PAYER_INDEXES } from '../../../devnet/accounts.js'
import { type FakeModelServer, startFakeModelServer } from '../../../tests/support/fakeModelServer.js'
import { evmEnv, type EvmPeers, startEvmPeers } from '../../../tests/storage/harness.js'
import { startTestGateway, type TestGateway } from '../../../tests/support/startTestGateway.js'
import { formatText } from '../../report.js'
import { loadMachine, runMachine } from '../../runner.js'
import type { Target } from '../../types.js'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

let peers: EvmPeers
let models: FakeModelServer
let gw: TestGateway
const here = path.dirname(fileURLToPath(import.meta.url))
const overlord = privateKeyToAccount(generatePrivateKey())

beforeAll(async () => {
  peers = await startEvmPeers()
  models = await startFakeModelServer()
  // every domain, as a deployment has them (the claim-now row signs in as the overlord)
  gw = await startTestGateway({
    modelServerUrl: models.url,
    env: {
      ...evmEnv(peers),
      SERVICE_X402__BATCH__AUTHORIZER_KEY: generatePrivateKey(),
      SERVICE_X402__BATCH__CLAIM_INTERVAL_S: '0',
      SERVICE_LOGIN__CHAIN_ID: '8453',
      SHADOW_OVERLORD_ADDRESS: overlord.address,
      SHADOW_JWT_SECRET: randomBytes(32).toString('hex'),
    },
  })
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await models?.close()
  await peers?.close()
})

describe.each(['mcp2026.yaml', 'batchSettlement.yaml', 'signInWithX.yaml'])('machine %s on the devnet gateway', (file) => {
  it('every row holds', async () => {
    const target: Target = {
      urls: { gateway: gw.url },
      keys: { payer: privateKeyToAccount(anvilAccount(PAYER_INDEXES[0]).privateKey), overlord },
      hooks: { chain: { payers: {}, rpcs: { 'eip155:8453': peers.base.url } } },
    }
    const results = await runMachine(loadMachine(path.join(here, file)), target)
    expect(results.filter((r) => r.outcome !== 'passed'), formatText(results)).toEqual([])
    expect(results.length).toBeGreaterThan(0)
    expect(gw.validationErrors).toEqual([])
  }, 60_000)
})
