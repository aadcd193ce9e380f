/**
 * Replay across routes and rails (docs/security.md "Money paths"), played by an attacker against the
 * devnet peers (two Anvil chains with the EIP-3009 USDC, the x402 facilitator, the storage upstream, a live
 * model server) and the whole gateway: one EIP-3009 authorization whose value covers both prices, to the
 * service's payTo, sent to `POST /store` and to a cost route past the quota — one after the other, at once, and
 * while the instance that claimed it for `/store` is dead. One authorization is one payment: it buys one
 * thing, whichever route claims it first; every other route refuses it (409 `payment_replayed`) before the
 * facilitator or the model server hear of it. Then the same payload with its network swapped to the other EVM
 * rail: refused, nothing moves on either chain.
 */
import { randomBytes } from 'node:crypto'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { type LocalChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { newDepositId, newUploadId } from '../../src/storage/ids.js'
import { recoverOrphanedClaims } from '../../src/storage/recoverClaims.js'
import { readX402Config } from '../../src/x402/config.js'
import { createAlgodClient } from '../../src/x402/rails/algorand/createAlgodClient.js'
import { createRailRegistry } from '../../src/x402/RailRegistry.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'
import { evmEnv, type EvmPeers, multipart, PAY_TO_EVM, payingClient, startEvmPeers } from './harness.js'

/** Price of one cost call past the quota (atomic USDC). */
const CALL_PRICE = 1_500n
const PAYER = 3

let peers: EvmPeers
let engine: Engine
let ms: TestModelServer
let gw: TestGateway
let token: string

beforeAll(async () => {
  peers = await startEvmPeers()
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: {
      ...evmEnv(peers),
      SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: CALL_PRICE.toString(),
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '0',
      SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
    },
  })
  token = await gw.login(privateKeyToAccount(generatePrivateKey()))
}, 120_000)

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
  await peers?.close()
})

const balanceOf = (chain: LocalChain, who: `0x${string}`) =>
  createPublicClient({ chain: chain.chain, transport: http(chain.url) }).readContract({
    address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who],
  }) as Promise<bigint>

const chat = (headers: Record<string, string> = {}) =>
  fetch(`${gw.url}/llm/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-token': token, ...headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Hello' }], options: { num_predict: 6, seed: 3 } }),
  })
const store = (data: Uint8Array, headers: Record<string, string> = {}) => fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers })

/** Cost calls the usage ledger saw for the session's wallet (every call the model server was asked for). */
const costCalls = async () => {
  // a call is recorded just after its last bytes are written
  await new Promise((r) => setTimeout(r, 300))
  return (await gw.gateway.services.db.selectFrom('llm_usage').select('usage_id').execute()).length
}

type Attack = { data: Uint8Array; header: Record<string, string>; value: bigint; nonce: string }

/**
 * The attacker's one authorization: from the `/store` 402 of `data`, signed by a stock x402 client for the sum of
 * the upload's price and a cost call's, valid for 10 minutes (so it covers either route: a cost call wants the
 * longest call plus its settlement), to the service's payTo.
 */
async function oneAuthorization(chain: LocalChain = peers.base): Promise<Attack> {
  const data = randomBytes(2048)
  const first = await store(data)
  expect(first.status).toBe(402)
  const client = payingClient(chain, PAYER)
  const required = client.getPaymentRequiredResponse((n) => first.headers.get(n), await first.json())
  const storePrice = BigInt(required.accepts.find((a) => a.network === chain.network)!.amount)
  const value = storePrice + CALL_PRICE
  const payload = await client.createPaymentPayload({ ...required, accepts: required.accepts.map((a) => ({ ...a, amount: value.toString(), maxTimeoutSeconds: 600 })) })
  const authorization = (payload.payload as { authorization: { to: string; value: string; nonce: string } }).authorization
  expect(authorization.to.toLowerCase()).toBe(PAY_TO_EVM.toLowerCase())
  expect(BigInt(authorization.value)).toBe(value)
  return { data, header: client.encodePaymentSignatureHeader(payload), value, nonce: authorization.nonce }
}

const replayed = async (res: Response) => {
  expect(res.status).toBe(409)
  expect(await res.json()).toEqual({ error: 'payment_replayed', message: 'this payment was already used: one payment buys one upload or one call' })
}

describe('one authorization on two routes (attacker: the payer)', () => {
  it('used on /store first, then on a cost route past the quota: the cost route refuses it 409 before any model work', async () => {
    const attack = await oneAuthorization()
    const payer = anvilAccount(PAYER).address
    const before = await balanceOf(peers.base, payer)
    const stored = await store(attack.data, attack.header)
    expect(stored.status, await stored.clone().text()).toBe(200)
    const calls = await costCalls()
    await replayed(await chat(attack.header))
    expect(await costCalls()).toBe(calls)
    expect(before - (await balanceOf(peers.base, payer))).toBe(attack.value)
    expect(gw.validationErrors).toEqual([])
  })

  it('used on a cost route first, then on /store: /store refuses it 409, nothing spooled or stored', async () => {
    const attack = await oneAuthorization()
    const payer = anvilAccount(PAYER).address
    const before = await balanceOf(peers.base, payer)
    const paid = await chat(attack.header)
    expect(paid.status, await paid.clone().text()).toBe(200)
    expect(paid.headers.get('payment-response')).toBeTruthy()
    const uploads = (await gw.gateway.services.db.selectFrom('storage_uploads').select('upload_id').execute()).length
    await replayed(await store(attack.data, attack.header))
    expect((await gw.gateway.services.db.selectFrom('storage_uploads').select('upload_id').execute()).length).toBe(uploads)
    expect(before - (await balanceOf(peers.base, payer))).toBe(attack.value)
    expect(gw.validationErrors).toEqual([])
  })

  it('sent to both routes at once, five times over: one route serves, the others refuse 409, one transfer', async () => {
    for (let round = 0; round < 5; round++) {
      const attack = await oneAuthorization()
      const payer = anvilAccount(PAYER).address
      const before = await balanceOf(peers.base, payer)
      const calls = await costCalls()
      const [stored, called] = await Promise.all([store(attack.data, attack.header), chat(attack.header)])
      const statuses = [stored.status, called.status]
      expect(statuses.sort(), `round ${round}: /store ${stored.status} ${await stored.clone().text()} / chat ${called.status} ${await called.clone().text()}`).toEqual([200, 409])
      await replayed(stored.status === 409 ? stored : called)
      // the refused cost call never reached the model server
      expect(await costCalls()).toBe(calls + (called.status === 200 ? 1 : 0))
      expect(before - (await balanceOf(peers.base, payer))).toBe(attack.value)
    }
    expect(gw.validationErrors).toEqual([])
  })

  it('claimed for /store by an instance that then died: the cost route refuses it, so recovery cannot count its transfer for the upload too', async () => {
    const attack = await oneAuthorization()
    const decoded = JSON.parse(Buffer.from(attack.header['PAYMENT-SIGNATURE']!, 'base64').toString()) as { payload: { authorization: { from: string; nonce: string } } }
    const { ledger } = gw.gateway.services.storage
    const dead = `dead-${randomBytes(3).toString('hex')}`
    const t = Math.floor(Date.now() / 1000) - 1_000
    await gw.gateway.services.db.insertInto('gateway_instances').values({ instance_id: dead, host: 'h', pid: 1, started_at: t, heartbeat_at: t, stopped_at: null }).execute()
    // exactly what `/store` records before it asks the facilitator (settleStorePayment), by the instance that dies
    const depositId = newDepositId()
    const uploadId = newUploadId()
    const storePrice = attack.value - CALL_PRICE
    expect(
      await ledger.claimWithUpload(
        {
          depositId, payer: decoded.payload.authorization.from, nonce: decoded.payload.authorization.nonce, payTo: PAY_TO_EVM, network: peers.base.network,
          asset: peers.base.tokenAddress, scheme: 'exact', amountAtomic: attack.value, priceAtomic: storePrice, priceUsd: '0.005', resourceUrl: 'http://gw.test/store',
          paymentPayload: JSON.parse(Buffer.from(attack.header['PAYMENT-SIGNATURE']!, 'base64').toString()),
        },
        { uploadId, depositId, sha256: 'aa', mimeType: 'application/octet-stream', sizeBytes: BigInt(attack.data.length), appName: 'a', payerTag: decoded.payload.authorization.from, spoolPath: null as unknown as string, owner: dead },
        'pending_payment',
      ),
    ).toBe(true)
    await gw.gateway.services.db.updateTable('storage_uploads').set({ updated_at: t }).where('upload_id', '=', uploadId).execute()

    // while it is dead the payer spends the claimed authorization on a cost call
    await replayed(await chat(attack.header))

    // the live instance's recovery reads the chain: nothing used the authorization, so nothing is recorded
    const x402 = readX402Config({ ...evmEnv(peers), SERVICE_X402__RPC_URL__EIP155_8453: peers.base.url })
    const recovered = await recoverOrphanedClaims({ ledger, spool: gw.gateway.services.storage.spool, rails: createRailRegistry(x402, createAlgodClient(x402.algodUrl, '')), self: 'live', leaseS: 20 })
    expect(recovered).toBe(0)
    expect((await ledger.getDeposit(depositId))?.status).toBe('claimed')
    expect((await ledger.getUploadRow(uploadId))?.status).toBe('pending_payment')
    expect(gw.validationErrors).toEqual([])
  })
})

describe('one authorization on two rails (attacker: the payer)', () => {
  it('a Base payload with its network swapped to eip155:1 (asset too) is refused on /store and on a cost route; nothing moves on either chain', async () => {
    const attack = await oneAuthorization(peers.base)
    const payer = anvilAccount(PAYER).address
    const before = [await balanceOf(peers.base, payer), await balanceOf(peers.mainnet, payer)]
    const decoded = JSON.parse(Buffer.from(attack.header['PAYMENT-SIGNATURE']!, 'base64').toString()) as { accepted: Record<string, unknown> }
    const encode = (v: unknown) => ({ 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(v)).toString('base64') })
    const swapped = encode({ ...decoded, accepted: { ...decoded.accepted, network: peers.mainnet.network } })
    const swappedWithAsset = encode({ ...decoded, accepted: { ...decoded.accepted, network: peers.mainnet.network, asset: peers.mainnet.tokenAddress } })
    // the network alone: the asset is Base's, refused locally; network and asset: the EIP-712 domain (chain id,
    // token) the payer signed is Base's, so the signature is not the payer's on chain 1 — /store recovers the
    // signer before the upload gets a slot, the cost route's facilitator finds it invalid
    for (const [header, error, storeMessage, chatMessage] of [
      [swapped, 'wrong_asset', /^asset must be /, /^asset must be /],
      [swappedWithAsset, 'invalid_payment', /not signed by its payer/, /invalid_exact_evm_signature/],
    ] as const) {
      for (const [res, message] of [
        [await store(attack.data, header), storeMessage],
        [await chat(header), chatMessage],
      ] as const) {
        const body = (await res.json()) as { error: string; message: string; accepts: { network: string }[] }
        expect(res.status, JSON.stringify(body)).toBe(402)
        expect(body.error).toBe(error)
        expect(body.message).toMatch(message)
        expect(body.accepts.map((a) => a.network)).toContain(peers.mainnet.network)
      }
    }
    expect([await balanceOf(peers.base, payer), await balanceOf(peers.mainnet, payer)]).toEqual(before)
    // refused, not consumed: the honest payload still pays on Base, once
    expect((await store(attack.data, attack.header)).status).toBe(200)
    expect(before[0]! - (await balanceOf(peers.base, payer))).toBe(attack.value)
    expect(gw.validationErrors).toEqual([])
  })
})
