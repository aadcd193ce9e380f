import { createHash, randomBytes } from 'node:crypto'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import algosdk from 'algosdk'
import { createPublicClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from '../../devnet/algod/algoAccounts.js'
import { USDC_ASA_ID } from '../../devnet/algod/AlgoLedger.js'
import { startAlgod, type AlgodPeer } from '../../devnet/algod/startAlgod.js'
import type { LocalChain } from '../../devnet/chains/startChain.js'
import { createAlgodClient } from '../../src/storage/StorageService.js'
import { evmEnv, type EvmPeers, multipart, startAppGateway, startEvmPeers } from './harness.js'

const TOKEN = 'c'.repeat(64)
let peers: EvmPeers
let node: AlgodPeer
let gw: Awaited<ReturnType<typeof startAppGateway>>
const service = algosdk.generateAccount()
const payer = algoTestAccount(2)

beforeAll(async () => {
  peers = await startEvmPeers()
  node = await startAlgod({
    token: TOKEN, roundIntervalMs: 200, assetCreator: algoTestAccount(0).address,
    accounts: [
      { address: payer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC },
      { address: service.addr.toString(), microAlgos: 1_000_000n, usdc: 0n },
    ],
  })
  const env = { ...evmEnv(peers), SERVICE_ALGOD__URL: node.url, SERVICE_ALGOD__TOKEN: TOKEN, SERVICE_X402__PAY_TO_ALGORAND: service.addr.toString(), SERVICE_ALGOD__TIMEOUT_MS: '5000' }
  delete (env as Record<string, string>).SERVICE_ALGOD__GENESIS_HASH
  gw = await startAppGateway(env, peers.dir)
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await node?.close()
  await peers?.close()
})

const client = (chain: LocalChain, index: number) =>
  new x402HTTPClient(
    new x402Client((_v, accepts) => accepts.find((a) => a.network === chain.network)!)
      .register('eip155:*', new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(anvilAccount(index).privateKey), createPublicClient({ chain: chain.chain, transport: http(chain.url) }))))
      .setSpendControls({ allowedAssets: [{ network: chain.network, asset: chain.tokenAddress }] }),
  )

describe('POST /store through the real gateway app (response validation on)', () => {
  it('quotes, pays on local Base, stores, and shows the upload; every response matches the document', async () => {
    const data = randomBytes(10_000)
    const before = Math.floor(Date.now() / 1000)
    const first = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
    const quote = await first.json()
    expect(first.status, JSON.stringify(quote)).toBe(402)
    expect(quote.accepts).toHaveLength(3)
    expect(quote.accepts[2].network).toBe(`algorand:${node.genesisHash}`)
    const c = client(peers.base, 2)
    const required = c.getPaymentRequiredResponse((n) => first.headers.get(n), quote)
    const payload = await c.createPaymentPayload(required)
    const paid = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: { ...c.encodePaymentSignatureHeader(payload), 'X-SVC-Tag-App': 'app-test' } })
    const result = await paid.json()
    expect(paid.status, JSON.stringify(result)).toBe(200)
    expect(result.sha256).toBe(createHash('sha256').update(data).digest('hex'))
    expect(c.getPaymentSettleResponse((n) => paid.headers.get(n)).transaction).toBe(result.settlement.transaction)
    const rows = await gw.ledger.db.selectFrom('storage_uploads').selectAll().where('ar_tx_id', '=', result.arTxId).execute()
    const state = await fetch(`${gw.url}/store/uploads/${rows[0]!.upload_id}`)
    const body = await state.json()
    expect(state.status, JSON.stringify(body)).toBe(200)
    expect(body).toMatchObject({ status: 'stored', ar_tx_id: result.arTxId, result: { arTxId: result.arTxId } })
    // stored_at: when the upstream accepted the item; no attestation (no SERVICE_STORAGE__ATTESTOR_KEY here)
    expect(body.stored_at).toBeGreaterThanOrEqual(before)
    expect(body.stored_at).toBeGreaterThanOrEqual(body.created_at)
    expect(body.attestation).toBeNull()
    expect(gw.validationErrors).toEqual([])
  })

  it('stores on the Algorand rail through the app', async () => {
    const data = randomBytes(3000)
    const first = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data) })
    const req = (await first.json()).accepts[2]
    const algod = createAlgodClient(node.url, TOKEN)
    const text = `${req.resource}|${createHash('sha256').update(data).digest('hex')}|${data.length}|${BigInt(req.amount) / 1_000_000n}.${(BigInt(req.amount) % 1_000_000n).toString().padStart(6, '0')}`
    const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: payer.address, receiver: service.addr, assetIndex: USDC_ASA_ID, amount: BigInt(req.amount),
      note: new Uint8Array(createHash('sha256').update(text).digest()), suggestedParams: await algod.getTransactionParams().do(),
    })
    const { txid } = await algod.sendRawTransaction(txn.signTxn(payer.sk)).do()
    const header = Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'exact', network: req.network, resource: { url: req.resource, description: req.description, mimeType: req.mimeType }, accepted: req, extensions: {}, outputSchema: null, payload: { txId: txid } })).toString('base64')
    const r = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(data), headers: { 'PAYMENT-SIGNATURE': header } })
    const body = await r.json()
    expect(r.status, JSON.stringify(body)).toBe(200)
    expect(body.settlement).toMatchObject({ transaction: txid, network: req.network })
    expect(gw.validationErrors).toEqual([])
  })

  it('maps client mistakes to documented 4xx bodies', async () => {
    const empty = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(new Uint8Array()) })
    expect(empty.status).toBe(400)
    expect(await empty.json()).toEqual({ error: 'empty_body', message: 'empty body' })
    const other = Buffer.from(JSON.stringify({ x402Version: 2, accepted: { network: 'eip155:137' }, payload: {} })).toString('base64')
    const u = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(randomBytes(5)), headers: { 'PAYMENT-SIGNATURE': other } })
    expect(u.status).toBe(400)
    expect(await u.json()).toEqual({ error: 'unsupported_network', message: 'unsupported network eip155:137' })
    const garbage = await fetch(`${gw.url}/store`, { method: 'POST', body: multipart(randomBytes(5)), headers: { 'PAYMENT-SIGNATURE': 'bm90IGpzb24=' } })
    expect(garbage.status).toBe(400)
    expect((await garbage.json()).error).toBe('invalid_payment_header')
    // two files in one request: the quote would price the first and the second would be dropped unsaid
    const two = new FormData()
    two.append('file', new Blob([randomBytes(100)]), 'a.bin')
    two.append('file', new Blob([randomBytes(200)]), 'b.bin')
    const twice = await fetch(`${gw.url}/store`, { method: 'POST', body: two })
    expect(twice.status).toBe(400)
    expect(await twice.json()).toEqual({ error: 'invalid_multipart', message: 'more than one file part: store one file per request' })
    const missing = await fetch(`${gw.url}/store/uploads/upl_01JD7ZK4W1Q9X3M2N5P6R8S0TV`)
    expect(missing.status).toBe(404)
    expect((await missing.json()).error).toBe('upload_not_found')
    expect(gw.validationErrors).toEqual([])
  })
})
