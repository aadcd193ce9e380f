/**
 * A new EVM rail is one file plus its registration: a third network, eip155:84532 on its own Anvil
 * chain with the EIP-3009 USDC and its own facilitator, is registered at start as an `EvmExactRail` — nothing
 * else in src/ changes — and a stock x402 client pays `/store` on it. The 402 lists it after the configured
 * rails, and the deposit is recorded on that network.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX } from '../../devnet/accounts.js'
import { startChain, type LocalChain } from '../../devnet/chains/startChain.js'
import { startFacilitator, type FacilitatorPeer } from '../../devnet/facilitator/startFacilitator.js'
import { EvmExactRail } from '../../src/x402/rails/evm/EvmExactRail.js'
import { evmEnv, FACILITATOR_TOKEN, type EvmPeers, multipart, PAY_TO_EVM, payAndStoreOk, startEvmPeers, startAppGateway, type TestGateway } from './harness.js'

const THIRD = 84532
let peers: EvmPeers
let third: LocalChain
let facilitator: FacilitatorPeer
let gw: TestGateway

beforeAll(async () => {
  ;[peers, third] = await Promise.all([startEvmPeers(), startChain({ chainId: THIRD })])
  facilitator = await startFacilitator({ token: FACILITATOR_TOKEN, chains: [{ chainId: THIRD, rpcUrl: third.url }], signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey })
  gw = await startAppGateway({ ...evmEnv(peers), SERVICE_X402__FACILITATOR_URL: facilitator.url }, peers.dir, {
    // the registration: one rail, one network
    rails: (registry) => registry.register(new EvmExactRail({ network: third.network, label: 'USDC on Base Sepolia', asset: third.tokenAddress, tokenName: 'USD Coin', tokenVersion: '2', payTo: PAY_TO_EVM })),
  })
}, 180_000)

afterAll(async () => {
  await gw?.close()
  await facilitator?.close()
  await third?.close()
  await peers?.close()
})

describe('a third EVM network registered as a rail', () => {
  it('is offered in the 402 and pays /store; the deposit is on that network', async () => {
    const quote = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(randomBytes(10)) })
    expect(quote.status).toBe(402)
    const accepts = ((await quote.json()) as { accepts: { network: string; asset: string }[] }).accepts
    expect(accepts.map((a) => a.network)).toContain(`eip155:${THIRD}`)
    expect(accepts.find((a) => a.network === `eip155:${THIRD}`)?.asset).toBe(third.tokenAddress)

    const data = randomBytes(3000)
    const stored = await payAndStoreOk(gw.url, third, 2, data)
    expect(stored.sizeBytes).toBe(3000)
    const rows = await gw.ledger.listByPayer(anvilAccount(2).address, 10)
    expect(rows.find((r) => r.upload.ar_tx_id === stored.arTxId)?.deposit).toMatchObject({ network: `eip155:${THIRD}`, asset: third.tokenAddress, status: 'settled' })
  })

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(gw?.validationErrors ?? [])]).toEqual([])
  })
})
