/**
 * Machines `mcp-2026`, `batch-settlement` and `sign-in-with-x` (the agents' protocols) through the conformance
 * runner (driver `http`) against the live gateway app on the devnet, with batch-settlement configured: every row
 * holds, and every response matches the document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePrivateKey } from 'viem/accounts'
import { evmEnv, type EvmPeers, startAppGateway, startEvmPeers } from '../../../tests/storage/harness.js'
import { formatText } from '../../report.js'
import { loadMachine, runMachine } from '../../runner.js'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

let peers: EvmPeers
let gw: Awaited<ReturnType<typeof startAppGateway>>
const here = path.dirname(fileURLToPath(import.meta.url))

beforeAll(async () => {
  peers = await startEvmPeers()
  gw = await startAppGateway({ ...evmEnv(peers), SERVICE_X402__BATCH__AUTHORIZER_KEY: generatePrivateKey(), SERVICE_X402__BATCH__CLAIM_INTERVAL_S: '0', SERVICE_LOGIN__CHAIN_ID: '8453' }, peers.dir)
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await peers?.close()
})

describe.each(['mcp2026.yaml', 'batchSettlement.yaml', 'signInWithX.yaml'])('machine %s on the devnet gateway', (file) => {
  it('every row holds', async () => {
    const results = await runMachine(loadMachine(path.join(here, file)), { urls: { gateway: gw.url }, keys: {}, hooks: {} })
    expect(results.filter((r) => r.outcome !== 'passed'), formatText(results)).toEqual([])
    expect(results.length).toBeGreaterThan(0)
    expect(gw.validationErrors).toEqual([])
  }, 60_000)
})
