/**
 * x402 pending settlements against real peers: the devnet facilitator runs the reference schemes with a pending
 * settlement store, and its `/__devnet/pending` hook makes the next waits for a receipt time out — the settlement
 * transaction is broadcast (and lands), the facilitator answers `settlement_pending`. The gateway retries such a
 * settle once with the same payload (the facilitator reconciles against its broadcast, never a second transfer) on
 * every rail a cost call pays with; still pending after that, the payment stays claimed for recovery (502
 * `settlement_pending`, the payload never usable again) and the call is not served.
 */
import { randomBytes } from 'node:crypto'
import { x402Client } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX } from '../../devnet/accounts.js'
import { type LocalChain, startChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { type FacilitatorPeer, startFacilitator } from '../../devnet/facilitator/startFacilitator.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'

const TOKEN = randomBytes(32).toString('hex')
const PAY_TO = anvilAccount(7).address
const PRICE = 1500n

let chain: LocalChain
let facilitator: FacilitatorPeer
let engine: Engine
let ms: TestModelServer
let gw: TestGateway

beforeAll(async () => {
  chain = await startChain({ chainId: 8453 })
  facilitator = await startFacilitator({ token: TOKEN, chains: [{ chainId: 8453, rpcUrl: chain.url }], signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey })
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: {
      SERVICE_X402__FACILITATOR_URL: facilitator.url,
      FACILITATOR_TOKEN: TOKEN,
      SERVICE_X402__PAY_TO_EVM: PAY_TO,
      SERVICE_X402__UPTO_FACILITATOR_ADDRESS: facilitator.signer,
      SERVICE_X402__BATCH__AUTHORIZER_KEY: generatePrivateKey(),
      SERVICE_X402__BATCH__CLAIM_INTERVAL_S: '0',
      SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: PRICE.toString(),
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '0',
      SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
    },
  })
}, 180_000)

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
  await facilitator?.close()
  await chain?.close()
})

const pub = () => createPublicClient({ chain: chain.chain, transport: http(chain.url) })
const balanceOf = (who: `0x${string}`) => pub().readContract({ address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who] }) as Promise<bigint>

/** The next `times` settlements the facilitator broadcasts answer `settlement_pending` (they land all the same). */
const pendingNext = (times: number) =>
  fetch(`${facilitator.url}/__devnet/pending`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ times }) })

function payingFetch(payerIndex: number, scheme: 'exact' | 'upto' | 'batch-settlement', sent: string[] = []) {
  const signer = toClientEvmSigner(privateKeyToAccount(anvilAccount(payerIndex).privateKey), pub())
  const client = new x402Client((_v, accepts) => accepts.find((a) => a.scheme === scheme)!)
    .register('eip155:*', scheme === 'exact' ? new ExactEvmScheme(signer) : scheme === 'upto' ? new UptoEvmScheme(signer) : new BatchSettlementEvmScheme(signer))
    .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: chain.tokenAddress }] })
  const recording: typeof fetch = (input, init) => {
    const request = new Request(input, init)
    const header = request.headers.get('PAYMENT-SIGNATURE')
    if (header) sent.push(header)
    return fetch(request)
  }
  return wrapFetchWithPayment(recording, client)
}

async function chat(paid: typeof fetch, token: string) {
  return paid(`${gw.url}/llm/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session-token': token },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }], options: { num_predict: 2, seed: 3 } }),
  })
}

describe('x402 pending settlements on cost calls', () => {
  it('exact: a settlement_pending is retried once and reconciled — served, paid once', async () => {
    const payer = anvilAccount(2).address
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const before = await balanceOf(payer)
    expect((await pendingNext(1)).status).toBe(200)
    const res = await chat(payingFetch(2, 'exact'), token)
    expect(res.status).toBe(200)
    const settlement = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!)
    expect(settlement).toMatchObject({ success: true, scheme: 'exact', amount: PRICE.toString() })
    expect(await balanceOf(payer)).toBe(before - PRICE)
  })

  it('exact: still pending after the retry — not served, the payment kept (a replay is refused), paid once on chain', async () => {
    const payer = anvilAccount(3).address
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const before = await balanceOf(payer)
    await pendingNext(2)
    const sent: string[] = []
    const res = await chat(payingFetch(3, 'exact', sent), token)
    expect(res.status).toBe(502)
    expect(await res.json()).toMatchObject({ error: 'settlement_pending' })
    // the broadcast landed; the payload is claimed for good, so it cannot pay for another call
    expect(await balanceOf(payer)).toBe(before - PRICE)
    const replay = await fetch(`${gw.url}/llm/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-token': token, 'PAYMENT-SIGNATURE': sent.at(-1)! },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }], options: { num_predict: 2 } }),
    })
    expect(replay.status).toBe(409)
    const rows = await gw.database.db.selectFrom('cost_payments').select(['status']).where('payer', '=', payer.toLowerCase()).execute()
    expect(rows).toEqual([{ status: 'settle_unknown' }])
    expect(await balanceOf(payer)).toBe(before - PRICE)
  })

  it('upto: a settlement_pending after the call is retried once and reconciled — no debt left', async () => {
    const payer = anvilAccount(4).address
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const before = await balanceOf(payer)
    await pendingNext(1)
    const res = await chat(payingFetch(4, 'upto'), token)
    expect(res.status).toBe(200)
    await res.text()
    const usage = async () =>
      ((await (await fetch(`${gw.url}/llm/usage?days=1`, { headers: { 'x-session-token': token } })).json()) as { totals: { spend_atomic: string } }).totals.spend_atomic
    await expect.poll(usage, { timeout: 30_000 }).not.toBe('0')
    expect(await balanceOf(payer)).toBe(before - BigInt(await usage()))
    expect(await gw.database.db.selectFrom('settlement_debts').selectAll().where('payer', '=', payer.toLowerCase()).execute()).toEqual([])
  })

  it("batch-settlement: a deposit's settlement_pending is retried once by the scheme's server and reconciled", async () => {
    const payer = anvilAccount(5).address
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const before = await balanceOf(payer)
    await pendingNext(1)
    const res = await chat(payingFetch(5, 'batch-settlement'), token)
    expect(res.status).toBe(200)
    const settlement = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!)
    expect(settlement).toMatchObject({ success: true, scheme: 'batch-settlement' })
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    // one deposit moved, once
    const deposits = await gw.database.db.selectFrom('batch_settlement_txs').select(['kind', 'tx_hash']).where('kind', '=', 'deposit').execute()
    expect(deposits).toHaveLength(1)
    expect(before - (await balanceOf(payer))).toBe(BigInt((settlement.extra as { channelState: { balance: string } }).channelState.balance))
  })
})
