import { createHash, randomBytes } from 'node:crypto'
import algosdk from 'algosdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ALGO_PAYER_MICROALGOS, ALGO_PAYER_USDC, algoTestAccount } from '../../devnet/algod/algoAccounts.js'
import { OTHER_ASA_ID, USDC_ASA_ID } from '../../devnet/algod/AlgoLedger.js'
import { startAlgod, type AlgodPeer } from '../../devnet/algod/startAlgod.js'
import { createAlgodClient } from '../../src/storage/StorageService.js'
import { evmEnv, type EvmPeers, multipart, startEvmPeers, startAppGateway, type TestGateway } from './harness.js'

const TOKEN = 'b'.repeat(64)
let peers: EvmPeers
let node: AlgodPeer
let gw: TestGateway
let gwNoRate: TestGateway
let algod: algosdk.Algodv2
const service = algosdk.generateAccount()
const stranger = algosdk.generateAccount()
const payer = algoTestAccount(1)

beforeAll(async () => {
  peers = await startEvmPeers()
  node = await startAlgod({
    token: TOKEN,
    roundIntervalMs: 200,
    assetCreator: algoTestAccount(0).address,
    accounts: [
      { address: payer.address, microAlgos: ALGO_PAYER_MICROALGOS, usdc: ALGO_PAYER_USDC, otherAsa: ALGO_PAYER_USDC },
      { address: service.addr.toString(), microAlgos: 1_000_000n, usdc: 0n, otherAsa: 0n },
      { address: stranger.addr.toString(), microAlgos: 1_000_000n, usdc: 0n },
    ],
  })
  algod = createAlgodClient(node.url, TOKEN)
  const env = { ...evmEnv(peers), SERVICE_ALGOD__URL: node.url, SERVICE_ALGOD__TOKEN: TOKEN, SERVICE_X402__PAY_TO_ALGORAND: service.addr.toString(), SERVICE_ALGOD__POLL_INTERVAL_MS: '200', SERVICE_ALGOD__TIMEOUT_MS: '3000' }
  delete (env as Record<string, string>).SERVICE_ALGOD__GENESIS_HASH
  // $0.25 per ALGO: native payments count at 4 micro-ALGO per micro-USD
  gw = await startAppGateway({ ...env, SERVICE_X402__ALGO_USD_RATE: '0.25' }, peers.dir)
  // the default: no ALGO price configured, native ALGO refused
  gwNoRate = await startAppGateway({ ...env, SERVICE_DATABASE_URL: `sqlite:${peers.dir}/no-rate.sqlite` }, peers.dir)
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await gwNoRate?.close()
  await node?.close()
  await peers?.close()
})

type Requirement = { network: string; amount: string; maxAmountRequired: string; payTo: string; asset: string; resource: string; extra: Record<string, unknown> }

async function quote(data: Uint8Array, gateway: TestGateway = gw) {
  const r = await fetch(`${gateway.url}/store`, { method: 'POST', body: multipart(data) })
  expect(r.status).toBe(402)
  const body = (await r.json()) as { accepts: Requirement[] }
  return body.accepts[2]!
}

async function submit(opts: { note: Uint8Array; amount: bigint; receiver?: string; native?: boolean; wait?: boolean; assetIndex?: bigint }) {
  const params = await algod.getTransactionParams().do()
  const receiver = opts.receiver ?? service.addr.toString()
  const txn = opts.native
    ? algosdk.makePaymentTxnWithSuggestedParamsFromObject({ sender: payer.address, receiver, amount: opts.amount, note: opts.note, suggestedParams: params })
    : algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({ sender: payer.address, receiver, assetIndex: opts.assetIndex ?? USDC_ASA_ID, amount: opts.amount, note: opts.note, suggestedParams: params })
  const { txid } = await algod.sendRawTransaction(txn.signTxn(payer.sk)).do()
  return txid
}

const header = (req: Requirement, txId: string) => ({
  'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify({ x402Version: 2, scheme: 'exact', network: req.network, accepted: req, payload: { txId } })).toString('base64'),
})

/** price_usd as the client derives it from the atomic amount: six decimals. */
const priceUsd = (atomic: string) => `${BigInt(atomic) / 1_000_000n}.${(BigInt(atomic) % 1_000_000n).toString().padStart(6, '0')}`

function binding(req: Requirement, data: Uint8Array): Uint8Array {
  const sha = createHash('sha256').update(data).digest('hex')
  const text = `${req.resource}|${sha}|${data.length}|${priceUsd(req.amount)}`
  return new Uint8Array(createHash('sha256').update(text).digest())
}

const store = (data: Uint8Array, req: Requirement, txId: string, gateway: TestGateway = gw) =>
  fetch(`${gateway.url}/store`, { method: 'POST', body: multipart(data), headers: header(req, txId) }).then(async (r) => ({ status: r.status, body: await r.json() }))

describe('POST /store on the Algorand rail (devnet algod)', () => {
  it('advertises algorand:<genesis hash> with asset 31566704 and the request binding', async () => {
    const req = await quote(randomBytes(100))
    expect(req.network).toBe(`algorand:${node.genesisHash}`)
    expect(req.asset).toBe('31566704')
    expect(req.payTo).toBe(service.addr.toString())
    expect(req.extra).toEqual({ requestHashBinding: true, nativeAlgo: { amount: String(BigInt(req.amount) * 4n), algoUsdRate: '0.25' } })
    expect((await quote(randomBytes(100), gwNoRate)).extra).toEqual({ requestHashBinding: true, nativeAlgo: null })
  })

  it('stores when the ASA payment carries the right note; bytes read back', async () => {
    const data = randomBytes(5000)
    const req = await quote(data)
    const txId = await submit({ note: binding(req, data), amount: BigInt(req.amount) })
    const r = await store(data, req, txId)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.settlement).toMatchObject({ transaction: txId, payer: payer.address, asset: '31566704', amount: req.amount })
    const back = await fetch(`${peers.arweave.url}/${r.body.arTxId}`)
    expect(createHash('sha256').update(Buffer.from(await back.arrayBuffer())).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'))
    // the same transaction cannot pay twice
    const again = await store(data, req, txId)
    expect(again.status).toBe(409)
    expect(again.body.error).toBe('payment_replayed')
  })

  it('accepts native ALGO only at the operator-set rate, never at face value', async () => {
    const data = randomBytes(700)
    const req = await quote(data)
    // attacker: the USD price in micro-ALGO (a quarter of the price at $0.25 per ALGO)
    const cheap = await store(data, req, await submit({ note: binding(req, data), amount: BigInt(req.amount), native: true }))
    expect(cheap.status).toBe(402)
    expect(cheap.body).toMatchObject({ error: 'insufficient_amount' })
    const nativeAlgo = req.extra.nativeAlgo as { amount: string }
    const short = await store(data, req, await submit({ note: binding(req, data), amount: BigInt(nativeAlgo.amount) - 1n, native: true }))
    expect(short.body).toMatchObject({ error: 'insufficient_amount' })
    // honest: the micro-ALGO the requirement states
    const r = await store(data, req, await submit({ note: binding(req, data), amount: BigInt(nativeAlgo.amount), native: true }))
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    expect(r.body.settlement).toMatchObject({ asset: 'ALGO', amount: nativeAlgo.amount })
  })

  it('refuses native ALGO with a clear 402 reason when no ALGO price is configured', async () => {
    const data = randomBytes(710)
    const req = await quote(data, gwNoRate)
    const txId = await submit({ note: binding(req, data), amount: BigInt(req.amount) * 1000n, native: true })
    const r = await store(data, req, txId, gwNoRate)
    expect(r.status).toBe(402)
    expect(r.body).toMatchObject({ error: 'wrong_asset', accepts: expect.arrayContaining([expect.objectContaining({ asset: '31566704' })]) })
    expect(r.body.message).toMatch(/native ALGO is not accepted.*31566704/)
  })

  it('rejects a wrong note with 402 request_hash_mismatch', async () => {
    const data = randomBytes(800)
    const req = await quote(data)
    const txId = await submit({ note: new Uint8Array(randomBytes(32)), amount: BigInt(req.amount) })
    const r = await store(data, req, txId)
    expect(r.status).toBe(402)
    expect(r.body.error).toBe('request_hash_mismatch')
  })

  it('rejects too small an amount with 402 insufficient_amount', async () => {
    const data = randomBytes(900)
    const req = await quote(data)
    const txId = await submit({ note: binding(req, data), amount: BigInt(req.amount) - 1n })
    const r = await store(data, req, txId)
    expect(r.status).toBe(402)
    expect(r.body.error).toBe('insufficient_amount')
  })

  it('rejects another receiver with 402 wrong_receiver', async () => {
    const data = randomBytes(1000)
    const req = await quote(data)
    const txId = await submit({ note: binding(req, data), amount: BigInt(req.amount), receiver: stranger.addr.toString() })
    const r = await store(data, req, txId)
    expect(r.status).toBe(402)
    expect(r.body.error).toBe('wrong_receiver')
  })

  it('a payment in another ASA confirms on the node and gets 402 wrong_asset (nothing recorded)', async () => {
    const data = randomBytes(1200)
    const req = await quote(data)
    const txId = await submit({ note: binding(req, data), amount: BigInt(req.amount), assetIndex: OTHER_ASA_ID })
    // the transaction is real and final: the service received the other token
    const confirmed = await algosdk.waitForConfirmation(algod, txId, 20)
    expect(confirmed.confirmedRound).toBeGreaterThan(0n)
    expect(confirmed.txn.txn.assetTransfer?.assetIndex).toBe(OTHER_ASA_ID)
    const held = await algod.accountAssetInformation(service.addr, OTHER_ASA_ID).do()
    expect(held.assetHolding?.amount).toBeGreaterThanOrEqual(BigInt(req.amount))
    const r = await store(data, req, txId)
    expect(r.status, JSON.stringify(r.body)).toBe(402)
    expect(r.body.error).toBe('wrong_asset')
    expect(r.body.message).toContain(String(OTHER_ASA_ID))
    expect(await gw.ledger.db.selectFrom('storage_deposits').selectAll().where('nonce', '=', txId).execute()).toHaveLength(0)
  })

  it('answers 402 expired_payment when the transaction is not confirmed within the timeout', async () => {
    const data = randomBytes(1100)
    const req = await quote(data)
    // a correctly formed id of a transaction the node never sees
    const params = await algod.getTransactionParams().do()
    const unsent = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: payer.address, receiver: service.addr, assetIndex: USDC_ASA_ID, amount: BigInt(req.amount), note: binding(req, data), suggestedParams: params,
    })
    const started = Date.now()
    const r = await store(data, req, unsent.txID())
    expect(r.status).toBe(402)
    expect(r.body.error).toBe('expired_payment')
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500)
  })

  it('rejects a malformed txId with 400', async () => {
    const data = randomBytes(10)
    const req = await quote(data)
    const r = await store(data, req, 'not-a-txid')
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('invalid_payment_header')
  })

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(gw?.validationErrors ?? []), ...(gwNoRate?.validationErrors ?? [])]).toEqual([])
  })
})
