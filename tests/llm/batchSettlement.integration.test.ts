/**
 * x402 `batch-settlement` against real peers: a local Base chain with the devnet USDC and x402's escrow and
 * deposit collector at their canonical addresses, the devnet facilitator (@x402/evm's reference facilitator
 * scheme), a live model server and two gateway instances on one PostgreSQL database. Past the quota an agent pays
 * chat calls with the stock x402 client (@x402/fetch + @x402/evm's batch-settlement client): one deposit, one
 * voucher per call, one claim transaction for all of them; the chain moves exactly what was served. Every check
 * where money moves has a test that tries to get past it: a replayed voucher, a lower running total, a voucher
 * past the deposit, a forged voucher, a channel naming another authorizer, two replicas claiming the same vouchers.
 */
import { randomBytes } from 'node:crypto'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import type { PaymentRequirements } from '@x402/core/types'
import { BATCH_SETTLEMENT_ADDRESS, toClientEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme, computeChannelId, signVoucher } from '@x402/evm/batch-settlement/client'
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX } from '../../devnet/accounts.js'
import { batchEscrowArtifact } from '../../devnet/chains/placeBatchSettlement.js'
import { type LocalChain, startChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { type FacilitatorPeer, startFacilitator } from '../../devnet/facilitator/startFacilitator.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'

const TOKEN = randomBytes(32).toString('hex')
const PAY_TO = anvilAccount(8).address
const AUTHORIZER_KEY = generatePrivateKey()
const OVERLORD = privateKeyToAccount(generatePrivateKey()).address
const JWT_SECRET = randomBytes(32).toString('hex')
/** Metered calls: atomic units per completion token, the least and the most a call costs (the voucher's step). */
const PER_TOKEN = 7n
const MIN = 10n
const MAX = 1500n
const CALLS = 100
/** The deposit the 402 suggests covers 120 calls at the most a call costs: one deposit pays the 100. */
const DEPOSIT_CALLS = 120n

let chain: LocalChain
let facilitator: FacilitatorPeer
let engine: Engine
let ms: TestModelServer
let gw: TestGateway
let replica: TestGateway

const env = () => ({
  SERVICE_X402__FACILITATOR_URL: facilitator.url,
  FACILITATOR_TOKEN: TOKEN,
  SERVICE_X402__PAY_TO_EVM: PAY_TO,
  SERVICE_X402__BATCH__AUTHORIZER_KEY: AUTHORIZER_KEY,
  SERVICE_X402__BATCH__CLAIM_INTERVAL_S: '0',
  SERVICE_X402__BATCH__MIN_DEPOSIT_CALLS: DEPOSIT_CALLS.toString(),
  SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '1500',
  SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: PER_TOKEN.toString(),
  SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC: MIN.toString(),
  SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC: MAX.toString(),
  SERVICE_QUOTA__COST_CALLS_PER_DAY: '0',
  SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
  // the admin tier, so that claiming now answers as it does in production (the bearer is asked for)
  SHADOW_OVERLORD_ADDRESS: OVERLORD,
  SHADOW_JWT_SECRET: JWT_SECRET,
})

beforeAll(async () => {
  chain = await startChain({ chainId: 8453 })
  facilitator = await startFacilitator({ token: TOKEN, chains: [{ chainId: 8453, rpcUrl: chain.url }], signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey })
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  gw = await startTestGateway({ dialect: 'postgres', modelServerUrl: ms.url, env: env() })
  replica = await startTestGateway({ databaseUrl: gw.databaseUrl, modelServerUrl: ms.url, env: env() })
}, 180_000)

afterAll(async () => {
  await replica?.close()
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
  await facilitator?.close()
  await chain?.close()
})

const pub = () => createPublicClient({ chain: chain.chain, transport: http(chain.url) })
const balanceOf = (who: `0x${string}`) => pub().readContract({ address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who] }) as Promise<bigint>
const onChainChannel = async (channelId: `0x${string}`) => {
  const [balance, totalClaimed] = (await pub().readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi: batchEscrowArtifact().abi, functionName: 'channels', args: [channelId] })) as [bigint, bigint]
  return { balance, totalClaimed }
}

const chatBody = (numPredict = 2) => ({ messages: [{ role: 'user', content: 'Hi' }], options: { num_predict: numPredict, seed: 3 } })
const chat = (url: string, token: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token, ...headers }, body: JSON.stringify(chatBody()) })
/** What a call that produced `tokens` costs: ⌈tokens × price⌉, at least the minimum, at most the maximum. */
const costOf = (tokens: number) => {
  const cost = BigInt(tokens) * PER_TOKEN
  return cost < MIN ? MIN : cost > MAX ? MAX : cost
}

const signerOf = (payer: `0x${string}`) => toClientEvmSigner(privateKeyToAccount(payer), pub())

/** The stock x402 client that pays `batch-settlement` only, the devnet USDC allowed. */
function batchClient(payerKey: `0x${string}`, scheme = new BatchSettlementEvmScheme(signerOf(payerKey))) {
  const client = new x402Client((_v, accepts) => accepts.find((a) => a.scheme === 'batch-settlement')!)
    .register('eip155:*', scheme)
    .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: chain.tokenAddress }] })
  return { client, scheme }
}

/** A fetch that keeps the payment header of every request it sends (what an eavesdropper or a buggy agent replays). */
function recordingFetch(sent: string[]): typeof fetch {
  return (input, init) => {
    const request = new Request(input, init)
    const header = request.headers.get('PAYMENT-SIGNATURE')
    if (header) sent.push(header)
    return fetch(request)
  }
}

/** The batch requirement of a 402 for a chat call (a fresh 402, read by the stock client's decoder). */
async function batchRequirement(token: string): Promise<PaymentRequirements> {
  const res = await chat(gw.url, token)
  expect(res.status).toBe(402)
  const required = new x402HTTPClient(new x402Client()).getPaymentRequiredResponse((n) => res.headers.get(n), await res.json())
  return required.accepts.find((a) => a.scheme === 'batch-settlement')!
}

/** A voucher payload built by hand (what an attacker sends): `maxClaimableAmount` chosen, signed by `signerKey`. */
async function voucherHeader(requirement: PaymentRequirements, payerKey: `0x${string}`, maxClaimable: bigint, opts: { signerKey?: `0x${string}`; receiverAuthorizer?: `0x${string}`; type?: 'voucher' | 'refund' } = {}) {
  const payer = privateKeyToAccount(payerKey).address
  const channelConfig = {
    payer,
    payerAuthorizer: payer,
    receiver: requirement.payTo as `0x${string}`,
    receiverAuthorizer: opts.receiverAuthorizer ?? (requirement.extra.receiverAuthorizer as `0x${string}`),
    token: requirement.asset as `0x${string}`,
    withdrawDelay: requirement.extra.withdrawDelay as number,
    salt: `0x${'0'.repeat(64)}` as `0x${string}`,
  }
  const channelId = computeChannelId(channelConfig, requirement.network)
  const voucher = await signVoucher(signerOf(opts.signerKey ?? payerKey), channelId, maxClaimable.toString(), requirement.network)
  const payload = { x402Version: 2, accepted: requirement, payload: { type: opts.type ?? 'voucher', channelConfig, voucher } }
  return { header: { 'PAYMENT-SIGNATURE': Buffer.from(JSON.stringify(payload)).toString('base64') }, channelId }
}

describe('x402 batch-settlement on cost calls', () => {
  it('offers batch-settlement beside exact: the escrow terms, the gateway as receiver authorizer', async () => {
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const requirement = await batchRequirement(token)
    expect(requirement).toMatchObject({
      scheme: 'batch-settlement',
      network: 'eip155:8453',
      amount: MAX.toString(),
      payTo: PAY_TO,
      asset: chain.tokenAddress,
      extra: { receiverAuthorizer: privateKeyToAccount(AUTHORIZER_KEY).address, withdrawDelay: 86_400, minDeposit: (MAX * DEPOSIT_CALLS).toString(), assetTransferMethod: 'eip3009' },
    })
    // claiming now is the operator's: without the overlord bearer, 401
    expect((await fetch(`${gw.url}/x402/batch-settlement/claims`, { method: 'POST' })).status).toBe(401)
    expect(gw.validationErrors).toEqual([])
  })

  it(`an agent pays ${CALLS} chat calls through one deposit; two replicas claim once; the payer's balance moves by exactly what was served`, async () => {
    const payerKey = anvilAccount(3).privateKey
    const payer = anvilAccount(3).address
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const before = { payer: await balanceOf(payer), payTo: await balanceOf(PAY_TO) }
    const { client, scheme } = batchClient(payerKey)
    const sent: string[] = []
    const paidFetch = wrapFetchWithPayment(recordingFetch(sent), client)

    let channelId = ''
    let served = 0n
    for (let i = 0; i < CALLS; i++) {
      // the calls alternate between the two instances: the channel's running total is the database's
      const res = await paidFetch(`${i % 2 === 0 ? gw.url : replica.url}/llm/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-session-token': token },
        body: JSON.stringify(chatBody((i % 6) + 1)),
      })
      expect(res.status, `call ${i}`).toBe(200)
      const answer = (await res.json()) as { eval_count: number }
      const settlement = decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!)
      // charged what the call produced, not the voucher's step
      expect(settlement).toMatchObject({ success: true, scheme: 'batch-settlement', amount: costOf(answer.eval_count).toString(), payer: payer.toLowerCase() })
      served += BigInt(settlement.amount!)
      const state = (settlement.extra as { channelState: { channelId: string; chargedCumulativeAmount: string } }).channelState
      expect(state.chargedCumulativeAmount).toBe(served.toString())
      channelId = state.channelId
      // one deposit, with the first call; every later call moved nothing on chain
      expect(settlement.transaction === '', `call ${i} transaction`).toBe(i > 0)
    }
    const deposit = MAX * DEPOSIT_CALLS
    expect(await balanceOf(payer)).toBe(before.payer - deposit)
    expect(await onChainChannel(channelId as `0x${string}`)).toEqual({ balance: deposit, totalClaimed: 0n })

    // a replayed voucher (the last call's, sent again as is) buys nothing
    const replayed = await chat(gw.url, token, { 'PAYMENT-SIGNATURE': sent.at(-1)! })
    expect(replayed.status).toBe(409)
    expect(((await replayed.json()) as { error: string }).error).toBe('payment_replayed')

    // both replicas run the claim job at once: one claim transaction carries the channel's voucher
    const [a, b] = await Promise.all([gw.gateway.services.batchSettlement!.claims.run(), replica.gateway.services.batchSettlement!.claims.run()])
    const claims = [...a, ...b].flatMap((r) => r.claims)
    expect(claims).toEqual([{ vouchers: 1, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) }])
    expect([...a, ...b].filter((r) => r.network === 'eip155:8453').map((r) => r.outcome).sort()).toEqual(['busy', 'ran'])
    const txs = await gw.database.db.selectFrom('batch_settlement_txs').select(['kind', 'vouchers']).where('kind', '=', 'claim').execute()
    expect(txs).toEqual([{ kind: 'claim', vouchers: 1 }])
    // a second run finds nothing left to claim
    expect((await gw.gateway.services.batchSettlement!.claims.run()).flatMap((r) => r.claims)).toEqual([])
    expect(await onChainChannel(channelId as `0x${string}`)).toEqual({ balance: deposit, totalClaimed: served })
    expect(await balanceOf(PAY_TO)).toBe(before.payTo + served)

    // the payer takes the rest of its deposit back (the stock client's cooperative refund)
    const refund = await scheme.refund(`${gw.url}/x402/batch-settlement/refund`)
    expect(refund).toMatchObject({ success: true, amount: (deposit - served).toString() })
    expect(await balanceOf(payer)).toBe(before.payer - served)
    expect(await balanceOf(PAY_TO)).toBe(before.payTo + served)

    // the usage ledger agrees: 100 paid calls, exactly what was served
    const usage = (await (await fetch(`${gw.url}/llm/usage?days=1`, { headers: { 'x-session-token': token } })).json()) as { totals: { paid_calls: number; spend_atomic: string } }
    expect(usage.totals).toMatchObject({ paid_calls: CALLS, spend_atomic: served.toString() })
    expect(gw.validationErrors).toEqual([])
    expect(replica.validationErrors).toEqual([])
  }, 600_000)

  describe('attacks on a funded channel', () => {
    const payerKey = anvilAccount(4).privateKey
    let token: string
    let requirement: PaymentRequirements
    let channel: `0x${string}`

    beforeAll(async () => {
      token = await gw.login(privateKeyToAccount(generatePrivateKey()))
      // a deposit of exactly the most one call costs, then one paid call (it cost less)
      const { client } = batchClient(payerKey, new BatchSettlementEvmScheme(signerOf(payerKey), { depositStrategy: () => MAX.toString() }))
      const res = await wrapFetchWithPayment(fetch, client)(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token }, body: JSON.stringify(chatBody()) })
      expect(res.status).toBe(200)
      requirement = await batchRequirement(token)
      channel = (await voucherHeader(requirement, payerKey, 0n)).channelId
    }, 120_000)

    const charged = async () => BigInt((await gw.gateway.services.batchSettlement!.channel('eip155:8453', channel))!.chargedCumulativeAmount)

    it('a lower running total is refused with the channel state the client resynchronises from', async () => {
      const before = await charged()
      const { header } = await voucherHeader(requirement, payerKey, before) // the charged total, not + the step
      const res = await chat(gw.url, token, header)
      expect(res.status).toBe(402)
      const body = (await res.json()) as { error: string; accepts: { scheme: string; extra: { channelState?: Record<string, string>; voucherState?: Record<string, string> } }[] }
      expect(body.error).toBe('invalid_batch_settlement_evm_cumulative_amount_mismatch')
      const accept = body.accepts.find((a) => a.scheme === 'batch-settlement')!
      expect(accept.extra.channelState).toMatchObject({ channelId: channel, chargedCumulativeAmount: before.toString() })
      expect(accept.extra.voucherState).toMatchObject({ signedMaxClaimable: (MAX).toString() })
      expect(await charged()).toBe(before)
    })

    it('a voucher past the deposit is refused', async () => {
      // the charged total + one step is past the deposit (what a client that does not top up would sign)
      const before = await charged()
      expect(before).toBeGreaterThan(0n)
      const past = await voucherHeader(requirement, payerKey, before + MAX)
      const res = await chat(gw.url, token, past.header)
      expect(res.status).toBe(402)
      expect(((await res.json()) as { message: string }).message).toContain('invalid_batch_settlement_evm_cumulative_exceeds_balance')
      expect(await charged()).toBe(before)
    })

    it('a voucher signed by another key is refused', async () => {
      const before = await charged()
      const forged = await voucherHeader(requirement, payerKey, before + MAX, { signerKey: generatePrivateKey() })
      const res = await chat(gw.url, token, forged.header)
      expect(res.status).toBe(402)
      expect(((await res.json()) as { message: string }).message).toContain('voucher_signature')
      expect(await charged()).toBe(before)
    })

    it("only the payer takes its deposit back: a refund signed by another key is refused, nothing moves", async () => {
      const payer = anvilAccount(4).address
      const [before, held] = [await balanceOf(payer), await onChainChannel(channel)]
      const forged = await voucherHeader(requirement, payerKey, await charged(), { signerKey: generatePrivateKey(), type: 'refund' })
      const res = await fetch(`${gw.url}/x402/batch-settlement/refund`, { headers: forged.header })
      expect(res.status).toBe(402)
      expect(((await res.json()) as { message: string }).message).toContain('voucher_signature')
      expect(await balanceOf(payer)).toBe(before)
      expect(await onChainChannel(channel)).toEqual(held)
    })

    it('a channel naming another receiver authorizer is refused before anything else', async () => {
      const other = await voucherHeader(requirement, payerKey, MAX, { receiverAuthorizer: privateKeyToAccount(generatePrivateKey()).address })
      const res = await chat(gw.url, token, other.header)
      expect(res.status).toBe(402)
      expect(await res.json()).toMatchObject({ error: 'invalid_payment', message: expect.stringContaining('receiverAuthorizer') })
      expect(gw.logText()).not.toContain(AUTHORIZER_KEY.slice(2))
    })
  })
})
