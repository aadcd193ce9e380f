import { randomBytes } from 'node:crypto'
/**
 * Settlement that cannot be outrun, against real peers: a local Base chain (Anvil, the devnet USDC, Permit2 and
 * x402's `upto` proxy), the devnet facilitator (x402's reference `upto` and `exact` schemes) behind a pass-through
 * that injects one fault at a time, a live model server, and two gateways on one PostgreSQL database.
 *
 * - A payment a few seconds from its deadline is refused before any generation (it was served, and its
 *   settlement failed `permit2_deadline_expired`: the payer paid nothing).
 * - A settlement that fails after a stream was served (the payer took its Permit2 allowance back in between)
 *   is a debt: the payer's next paid call is refused, on either gateway, until reconciliation settles it —
 *   exactly once, for the amount served, with both gateways racing.
 * - A settlement broadcast but reported `settlement_pending`, or whose answer was lost, is reconciled from the
 *   chain: found paid, never settled a second time. A payer who cancels its permit's nonce instead defaults.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import type { PaymentRequirements } from '@x402/core/types'
import { PERMIT2_ADDRESS, toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { createPublicClient, createWalletClient, http, maxUint256 } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX } from '../../devnet/accounts.js'
import { type LocalChain, startChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { permit2Artifact } from '../../devnet/chains/placePermit2.js'
import { type FacilitatorPeer, startFacilitator } from '../../devnet/facilitator/startFacilitator.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { type FacilitatorProxy, startFacilitatorProxy } from '../support/facilitatorProxy.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'

const TOKEN = randomBytes(32).toString('hex')
const PAY_TO = anvilAccount(8).address
const PER_TOKEN = 7n
const MIN = 10n
const MAX = 14_000n

let chain: LocalChain
let facilitator: FacilitatorPeer
let proxy: FacilitatorProxy
let engine: Engine
let ms: TestModelServer
/** Two replicas on one PostgreSQL database. */
let gw: TestGateway
let gw2: TestGateway

beforeAll(async () => {
  chain = await startChain({ chainId: 8453 })
  facilitator = await startFacilitator({ token: TOKEN, chains: [{ chainId: 8453, rpcUrl: chain.url }], signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey })
  proxy = await startFacilitatorProxy(facilitator.url)
  engine = await createEngine({ threads: 1 })
  ms = await startTestModelServer({ engine })
  const env = {
    SERVICE_X402__FACILITATOR_URL: proxy.url,
    FACILITATOR_TOKEN: TOKEN,
    SERVICE_X402__PAY_TO_EVM: PAY_TO,
    SERVICE_X402__UPTO_FACILITATOR_ADDRESS: facilitator.signer,
    SERVICE_X402__RPC_URL__EIP155_8453: chain.url,
    SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '1500',
    SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: PER_TOKEN.toString(),
    SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC: MIN.toString(),
    SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC: MAX.toString(),
    SERVICE_QUOTA__COST_CALLS_PER_DAY: '1',
    SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
  }
  gw = await startTestGateway({ dialect: 'postgres', modelServerUrl: ms.url, env })
  gw2 = await startTestGateway({ databaseUrl: gw.databaseUrl, modelServerUrl: ms.url, env })
}, 180_000)

afterAll(async () => {
  await gw2?.close()
  await gw?.close()
  await ms?.close()
  await engine?.dispose()
  await proxy?.close()
  await facilitator?.close()
  await chain?.close()
})

const pub = () => createPublicClient({ chain: chain.chain, transport: http(chain.url) })
const balanceOf = (who: `0x${string}`) =>
  pub().readContract({ address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who] }) as Promise<bigint>
/** The payer sets its Permit2 allowance for the USDC (0 takes it back). */
async function approvePermit2(payer: number, amount: bigint): Promise<void> {
  const wallet = createWalletClient({ account: privateKeyToAccount(anvilAccount(payer).privateKey), chain: chain.chain, transport: http(chain.url) })
  const hash = await wallet.writeContract({ address: chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'approve', args: [PERMIT2_ADDRESS, amount] })
  await pub().waitForTransactionReceipt({ hash })
}

const post = (g: TestGateway, token: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${g.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token, ...headers }, body: JSON.stringify(body) })
const chatBody = (numPredict: number, extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content: 'Tell me a long story' }], options: { num_predict: numPredict, seed: 3 }, ...extra })

/** A fresh wallet whose one quota unit is used: its next cost call gets the 402. */
async function walletPastQuota(): Promise<string> {
  return (await walletWithAddress()).token
}
async function walletWithAddress(): Promise<{ token: string; address: string }> {
  const account = privateKeyToAccount(generatePrivateKey())
  const token = await gw.login(account)
  expect((await post(gw, token, chatBody(2))).status).toBe(200)
  return { token, address: account.address.toLowerCase() }
}
/** The calls on record for `wallet` (the record is written just after the answer). */
const callsOf = (wallet: string) => gw.database.db.selectFrom('llm_usage').select(['usage_id', 'paid_by']).where('wallet', '=', wallet).execute()

/**
 * A stock x402 client's payment header for the 402 `res` (payer: Anvil account `payer`), in `scheme`; `alter`
 * changes the chosen requirement before it is signed (what a client with another clock or intent signs).
 */
async function payment(res: Response, payer: number, scheme: 'upto' | 'exact', alter?: (r: PaymentRequirements) => PaymentRequirements): Promise<Record<string, string>> {
  expect(res.status).toBe(402)
  const signer = toClientEvmSigner(privateKeyToAccount(anvilAccount(payer).privateKey), pub())
  const client = new x402HTTPClient(
    new x402Client((_v, accepts) => accepts.find((a) => a.scheme === scheme && a.network === 'eip155:8453')!)
      .register('eip155:*', scheme === 'upto' ? new UptoEvmScheme(signer) : new ExactEvmScheme(signer))
      .setSpendControls({ allowedAssets: [{ network: 'eip155:8453', asset: chain.tokenAddress }] }),
  )
  const required = client.getPaymentRequiredResponse((n) => res.headers.get(n), await res.json())
  if (alter) required.accepts = required.accepts.map(alter)
  return client.encodePaymentSignatureHeader(await client.createPaymentPayload(required))
}

const expectedFor = (tokens: number) => {
  const cost = BigInt(tokens) * PER_TOKEN
  return cost < MIN ? MIN : cost > MAX ? MAX : cost
}

type Debt = { payment_id: string; status: string; resolution: string | null; amount_atomic: string; cap_atomic: string; payer_fault: number; tx_hash: string | null }
const debtOf = async (payer: number): Promise<Debt | undefined> =>
  gw.database.db.selectFrom('settlement_debts').selectAll().where('payer', '=', anvilAccount(payer).address.toLowerCase()).orderBy('created_at', 'desc').executeTakeFirst()
async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await read()
    if (check(v) || Date.now() > deadline) return v
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Both gateways reconcile one debt at once, twice each (as their background rounds and a retry could). */
const race = (paymentId: string) =>
  Promise.all([gw, gw2, gw, gw2].map((g) => g.gateway.services.costPayments.reconciler.reconcile(paymentId)))

/** A streamed `/llm/chat` paid by `payer` (upto), read to its end; returns the tokens it reported. */
async function servedStream(token: string, payer: number): Promise<number> {
  const res = await post(gw, token, chatBody(40, { stream: true }), await payment(await post(gw, token, chatBody(40)), payer, 'upto'))
  expect(res.status).toBe(200)
  const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { done: boolean; eval_count?: number })
  expect(lines.at(-1)?.done).toBe(true)
  return lines.at(-1)!.eval_count!
}

describe('a payment must outlive the longest call plus its settlement', () => {
  for (const scheme of ['upto', 'exact'] as const) {
    it(`an ${scheme} payment signed 8 s from its deadline is refused 402 payment_expires_too_soon before any generation`, async () => {
      const { token, address } = await walletWithAddress()
      const offered = await post(gw, token, chatBody(20))
      const header = await payment(offered, 2, scheme, (r) => ({ ...r, maxTimeoutSeconds: 8 }))
      const [verifies, payerBefore] = [proxy.count('/verify'), await balanceOf(anvilAccount(2).address)]
      const refused = await post(gw, token, chatBody(20, { stream: true }), header)
      const body = (await refused.json()) as { error: string; message: string; details: Record<string, unknown>; accepts: { maxTimeoutSeconds: number }[] }
      expect(refused.status, JSON.stringify(body)).toBe(402)
      expect(body.error).toBe('payment_expires_too_soon')
      expect(body.details).toMatchObject({ min_validity_s: 135, max_call_s: 120, settle_margin_s: 15 })
      expect(body.message).toContain('at least 135 s')
      // the offer itself covers the window: a stock client signing it is accepted
      for (const r of body.accepts) expect(r.maxTimeoutSeconds).toBeGreaterThanOrEqual(135)
      // nothing ran: the facilitator never heard of it, no call beyond the quota's is on record, nothing moved
      expect(proxy.count('/verify')).toBe(verifies)
      await new Promise((r) => setTimeout(r, 300))
      expect((await until(() => callsOf(address), (c) => c.length >= 1)).map((c) => c.paid_by)).toEqual(['quota'])
      expect(await balanceOf(anvilAccount(2).address)).toBe(payerBefore)
      expect(gw.validationErrors).toEqual([])
    })
  }
})

describe('a settlement that fails after the call was served is a debt', () => {
  it('the payer takes its allowance back mid-call: the debt refuses its next paid call on both gateways until reconciliation settles it, once, with both racing', async () => {
    const PAYER = 3
    const payer = anvilAccount(PAYER).address
    const token = await walletPastQuota()
    proxy.next({ beforeSettle: () => approvePermit2(PAYER, 0n) })
    const [payerBefore, payToBefore] = [await balanceOf(payer), await balanceOf(PAY_TO)]
    const tokens = await servedStream(token, PAYER)
    const amount = expectedFor(tokens)
    const debt = await until(() => debtOf(PAYER), (d) => d !== undefined)
    expect(debt).toMatchObject({ status: 'owed', amount_atomic: amount.toString(), cap_atomic: MAX.toString(), payer_fault: 1 })
    expect(await balanceOf(payer)).toBe(payerBefore) // served, unpaid

    // the next paid call of that payer — for another wallet, on the other gateway — is refused before anything runs
    await approvePermit2(PAYER, maxUint256)
    const other = await gw2.login(privateKeyToAccount(generatePrivateKey()))
    expect((await post(gw2, other, chatBody(2))).status).toBe(200)
    const refused = await post(gw2, other, chatBody(5), await payment(await post(gw2, other, chatBody(5)), PAYER, 'upto'))
    const body = (await refused.json()) as { error: string; details: Record<string, unknown> }
    expect(refused.status).toBe(402)
    expect(body).toMatchObject({ error: 'settlement_owed', details: { payment_id: debt!.payment_id, amount_atomic: amount.toString(), status: 'owed' } })

    // both gateways reconcile at once, twice each: one settles it through the facilitator, the same amount, once
    const settles = proxy.count('/settle')
    await race(debt!.payment_id)
    const done = await debtOf(PAYER)
    expect(done).toMatchObject({ status: 'settled', resolution: 'settled_on_retry', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect(proxy.count('/settle')).toBe(settles + 1)
    expect(payerBefore - (await balanceOf(payer))).toBe(amount)
    expect((await balanceOf(PAY_TO)) - payToBefore).toBe(amount)
    const receipt = await pub().getTransactionReceipt({ hash: done!.tx_hash as `0x${string}` })
    expect(receipt.status).toBe('success')
    // closed: neither gateway touches it again, and the payer is served again
    await race(debt!.payment_id)
    expect(proxy.count('/settle')).toBe(settles + 1)
    const again = await post(gw2, other, chatBody(5), await payment(await post(gw2, other, chatBody(5)), PAYER, 'upto'))
    expect(again.status).toBe(200)
    expect(gw.validationErrors).toEqual([])
    expect(gw2.validationErrors).toEqual([])
  }, 60_000)

  it('a payer who then cancels its permit nonce defaults: the debt is never settled and keeps refusing the payer', async () => {
    const PAYER = 2
    const token = await walletPastQuota()
    proxy.next({ beforeSettle: () => approvePermit2(PAYER, 0n) })
    await servedStream(token, PAYER)
    const debt = await until(() => debtOf(PAYER), (d) => d !== undefined)
    expect(debt).toMatchObject({ status: 'owed', payer_fault: 1 })
    // the payer invalidates the permit's Permit2 nonce (and gives its allowance back, so only the chain can tell)
    const nonce = BigInt((await gw.database.db.selectFrom('settlement_debts').select('nonce').where('payment_id', '=', debt!.payment_id).executeTakeFirstOrThrow()).nonce)
    const wallet = createWalletClient({ account: privateKeyToAccount(anvilAccount(PAYER).privateKey), chain: chain.chain, transport: http(chain.url) })
    const hash = await wallet.writeContract({ address: PERMIT2_ADDRESS, abi: permit2Artifact().abi, functionName: 'invalidateUnorderedNonces', args: [nonce >> 8n, 1n << (nonce & 255n)] })
    expect((await pub().waitForTransactionReceipt({ hash })).status).toBe('success')
    await approvePermit2(PAYER, maxUint256)
    const settles = proxy.count('/settle')
    await race(debt!.payment_id)
    expect(await debtOf(PAYER)).toMatchObject({ status: 'defaulted', resolution: 'payer_default' })
    expect(proxy.count('/settle')).toBe(settles) // the chain said it can never settle: no settle tried
    const refused = await post(gw2, token, chatBody(5), await payment(await post(gw2, token, chatBody(5)), PAYER, 'upto'))
    expect(refused.status).toBe(402)
    expect(await refused.json()).toMatchObject({ error: 'settlement_owed', details: { payment_id: debt!.payment_id, status: 'defaulted' } })
  }, 60_000)

  for (const [fault, PAYER] of [
    ['reportPending', 4],
    ['dropAnswer', 5],
  ] as const) {
    it(`a settlement broadcast but ${fault === 'reportPending' ? 'reported settlement_pending' : 'whose answer was lost'} is found paid on the chain, never settled twice`, async () => {
      const payer = anvilAccount(PAYER).address
      const token = await walletPastQuota()
      proxy.next({ [fault]: true })
      const [payerBefore, payToBefore, settles] = [await balanceOf(payer), await balanceOf(PAY_TO), proxy.count('/settle')]
      const amount = expectedFor(await servedStream(token, PAYER))
      const debt = await until(() => debtOf(PAYER), (d) => d !== undefined)
      expect(debt).toMatchObject({ status: 'pending', amount_atomic: amount.toString(), payer_fault: 0 })
      if (fault === 'reportPending') expect(debt!.tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
      else expect(debt!.tx_hash).toBeNull()
      // it was paid all along (the broadcast landed)
      expect(payerBefore - (await balanceOf(payer))).toBe(amount)
      expect((await post(gw, token, chatBody(5), await payment(await post(gw, token, chatBody(5)), PAYER, 'upto'))).status).toBe(402)

      await race(debt!.payment_id)
      const reconciled = await debtOf(PAYER)
      expect(reconciled, JSON.stringify(reconciled)).toMatchObject({ status: 'settled', resolution: 'confirmed_on_chain', tx_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
      // the first settle only — and, after a settlement_pending answer, x402's one retry of it (which the proxy's
      // facilitator refuses: the broadcast is not pending there), never a settle from the reconciliation
      expect(proxy.count('/settle')).toBe(settles + (fault === 'reportPending' ? 2 : 1))
      expect(payerBefore - (await balanceOf(payer))).toBe(amount)
      expect((await balanceOf(PAY_TO)) - payToBefore).toBe(amount)
      const cost = await gw.database.db.selectFrom('cost_payments').selectAll().where('payment_id', '=', debt!.payment_id).executeTakeFirstOrThrow()
      expect(cost.status).toBe('settled')
      expect((await post(gw, token, chatBody(5), await payment(await post(gw, token, chatBody(5)), PAYER, 'upto'))).status).toBe(200)
      expect(gw.validationErrors).toEqual([])
    }, 60_000)
  }
})
