/**
 * A new rail is one file plus one registration: `SignedTransferRail` (tests/x402/signedTransferRail.ts), a
 * local chain no configured rail uses (eip155:84532), whose payment is a signed native-coin transfer settled on an Anvil devnet chain, is handed to
 * the real app (`createApp({ railPlugins })`) and pays for `POST /store` and for a cost call past the quota.
 * Nothing in src/ knows it.
 */
import { randomBytes } from 'node:crypto'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../devnet/accounts.js'
import { type LocalChain, startChain } from '../../devnet/chains/startChain.js'
import { encodeBase64Json } from '../../src/x402/headers.js'
import type { PaymentRequirement } from '../../src/x402/requirements.js'
import { evmEnv, type EvmPeers, multipart, startAppGateway, startEvmPeers, type TestGateway as StoreGateway } from '../storage/harness.js'
import { startFakeModelServer, type FakeModelServer } from '../support/fakeModelServer.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { signedTransferRail } from './signedTransferRail.js'

const PAY_TO = anvilAccount(8).address
let peers: EvmPeers
let local: LocalChain
let store: StoreGateway
let ms: FakeModelServer
let gw: TestGateway

beforeAll(async () => {
  ;[peers, local] = await Promise.all([startEvmPeers(), startChain({ chainId: 84532 })])
  const plugin = signedTransferRail({ chain: local.chain, rpcUrl: local.url, payTo: PAY_TO })
  store = await startAppGateway(evmEnv(peers), peers.dir, { railPlugins: [plugin] })
  ms = await startFakeModelServer()
  gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: { FACILITATOR_TOKEN: randomBytes(32).toString('hex'), SERVICE_X402__FACILITATOR_URL: 'http://127.0.0.1:9', SERVICE_X402__PAY_TO_EVM: PAY_TO, SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '1500', SERVICE_QUOTA__COST_CALLS_PER_DAY: '1' },
    railPlugins: [plugin],
  })
}, 180_000)

afterAll(async () => {
  await gw?.close()
  await ms?.close()
  await store?.close()
  await local?.close()
  await peers?.close()
})

const chain = () => local
const balanceOf = (who: `0x${string}`) => createPublicClient({ chain: chain().chain, transport: http(chain().url) }).getBalance({ address: who })

/** The payer signs (does not send) a transfer of the requirement's amount to its `payTo`. */
async function paymentHeader(requirement: PaymentRequirement, payerIndex: number): Promise<Record<string, string>> {
  const c: LocalChain = chain()
  const payer = privateKeyToAccount(anvilAccount(payerIndex).privateKey)
  const client = createPublicClient({ chain: c.chain, transport: http(c.url) })
  const signedTransfer = await payer.signTransaction({
    type: 'legacy',
    chainId: c.chain.id,
    to: requirement.payTo as `0x${string}`,
    value: BigInt(requirement.amount),
    nonce: await client.getTransactionCount({ address: payer.address, blockTag: 'pending' }),
    gas: 21_000n,
    gasPrice: (await client.getGasPrice()) * 2n,
  })
  return { 'payment-signature': encodeBase64Json({ x402Version: 2, accepted: requirement, payload: { signedTransfer, from: payer.address } }) }
}

const ours = (accepts: PaymentRequirement[]) => accepts.find((a) => a.network === `eip155:${chain().chain.id}`)!

describe('a fourth rail registered with one call', () => {
  it('is offered by POST /store and pays for an upload; the deposit is on its network', async () => {
    const data = randomBytes(64)
    const quote = await fetch(`${store.url}/store`, { method: 'POST', body: multipart(data) })
    expect(quote.status, JSON.stringify(store.validationErrors).slice(0, 1500)).toBe(402)
    const requirement = ours(((await quote.json()) as { accepts: PaymentRequirement[] }).accepts)
    expect(requirement).toMatchObject({ scheme: 'exact', payTo: PAY_TO, asset: '0' })
    const before = await balanceOf(PAY_TO)
    const paid = await fetch(`${store.url}/store`, { method: 'POST', body: multipart(data), headers: await paymentHeader(requirement, 5) })
    const body = (await paid.json()) as { settlement?: { transaction: string; network: string } }
    expect(paid.status, JSON.stringify(body)).toBe(200)
    expect(body.settlement).toMatchObject({ network: requirement.network, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) })
    expect((await balanceOf(PAY_TO)) - before).toBe(BigInt(requirement.amount))
    const deposits = await store.ledger.db.selectFrom('storage_deposits').select(['network', 'status']).where('network', '=', requirement.network).execute()
    expect(deposits).toEqual([{ network: requirement.network, status: 'settled' }])
    expect(store.validationErrors).toEqual([])
  })

  it('pays for a cost call past the quota', async () => {
    const token = await gw.login(privateKeyToAccount(generatePrivateKey()))
    const chat = (headers: Record<string, string> = {}) =>
      fetch(`${gw.url}/llm/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token, ...headers }, body: JSON.stringify({ messages: [{ role: 'user', content: 'Hello' }] }) })
    expect((await chat()).status).toBe(200)
    const refused = await chat()
    expect(refused.status).toBe(402)
    const requirement = ours(((await refused.json()) as { accepts: PaymentRequirement[] }).accepts)
    expect(requirement.amount).toBe('1500')
    const before = await balanceOf(PAY_TO)
    const paid = await chat(await paymentHeader(requirement, 6))
    expect(paid.status, await paid.clone().text()).toBe(200)
    const settlement = JSON.parse(Buffer.from(paid.headers.get('payment-response')!, 'base64').toString()) as { success: boolean; network: string }
    expect(settlement).toMatchObject({ success: true, network: requirement.network })
    expect((await balanceOf(PAY_TO)) - before).toBe(1500n)
    expect(gw.validationErrors).toEqual([])
  })
})
