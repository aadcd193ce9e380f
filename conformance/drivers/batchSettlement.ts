/**
 * Driver `batch-settlement`: machine `batch-settlement` (machines/agents/batchSettlement.yaml), x402's
 * `batch-settlement` scheme as a stock client lives it — @x402/core's client with @x402/evm's batch-settlement
 * scheme, signing with the target's `payer` key and reading the chain through the `chain` hook's RPC. Rows with a
 * `request` are the `http` driver's (one request, no signature). Rows with `do` walk the paying lifecycle, each
 * request through the DocumentClient (so every answer is checked against the document too):
 * - `terms`: the 402 of `GET /x402/batch-settlement/refund` (the terms a client builds its channel from; a chat
 *   call answers the same requirement once the quota is used), read by the stock client; a wallet session for the
 *   chat calls; the payer's balance before.
 * - `deposit`: the first paid `POST /llm/chat` — the client's deposit (EIP-3009 `receiveWithAuthorization` into
 *   x402's escrow) with its first voucher; one transaction, the deposit held by the channel on chain.
 * - `vouchers` (`calls`): paid chat calls, each a voucher of a running total one step above the charged total;
 *   each charged what the call cost, nothing moved on chain.
 * - `replay`: the last voucher sent again. `lower-total`: a voucher at the charged total (not above it).
 * - `claim`: the operator's claim now (`POST /x402/batch-settlement/claims`, the overlord's bearer): one claim
 *   transaction on the chain; the channel's claimed total on chain is what was served.
 * - `refund`: the stock client's cooperative refund of the unused deposit.
 * - `balance`: the payer's balance moved by exactly what was served.
 * `expect` takes `status` and `error` (of the refusals); the rest is checked by the driver.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { decodePaymentResponseHeader } from '@x402/core/http'
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types'
import { toClientEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme, computeChannelId, readChannelBalanceAndTotalClaimed, signVoucher } from '@x402/evm/batch-settlement/client'
import { randomBytes } from 'node:crypto'
import { createPublicClient, defineChain, erc20Abi, http } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import type { Reply } from '../DocumentClient.js'
import type { Driver } from '../runner.js'
import type { Row } from '../types.js'
import { expectProblems, httpDriver } from './http.js'

type Step = 'terms' | 'deposit' | 'vouchers' | 'replay' | 'lower-total' | 'claim' | 'refund' | 'balance'
type BatchRow = Row & { do?: Step; calls?: number; request?: unknown }

type ChannelConfig = Parameters<typeof computeChannelId>[0]
type Settlement = { success?: boolean; transaction?: string; amount?: string; payer?: string; extra?: { channelState?: { channelId?: string; chargedCumulativeAmount?: string } } }
type ClaimRun = { chains?: { network: string; outcome: string; claims: { vouchers: number; transaction: string }[] }[] }

/** What one run of the lifecycle carries from row to row. */
type Lifecycle = {
  network: string
  payer: PrivateKeyAccount
  publicClient: ReturnType<typeof createPublicClient>
  signer: ReturnType<typeof toClientEvmSigner>
  required: PaymentRequired
  requirement: PaymentRequirements
  client: x402Client
  http402: x402HTTPClient
  scheme: BatchSettlementEvmScheme
  session: string
  before: bigint
  deposit?: bigint
  served: bigint
  channelId?: `0x${string}`
  channelConfig?: ChannelConfig
  last?: string
}

const CHAT_BODY = { messages: [{ role: 'user', content: 'Hi' }], options: { num_predict: 2 } }

type DriverClient = Parameters<Driver>[0]['client']
type DriverTarget = Parameters<Driver>[0]['target']
/** What the steps share: the document client, the target, and the lifecycle the `terms` row starts. */
type DriverRun = { client: DriverClient; target: DriverTarget; life: { current?: Lifecycle } }

const rpcsOf = (target: DriverTarget) => target.hooks.chain?.rpcs ?? {}
const evmNetworks = (target: DriverTarget) => Object.keys(rpcsOf(target)).filter((n) => n.startsWith('eip155:'))

export const batchSettlementDriver: Driver = (context) => {
  const { target, client } = context
  const plain = httpDriver(context)
  let state = context.machine.initial ?? context.machine.rows[0]?.from
  const run: DriverRun = { client, target, life: {} }
  return {
    missing(original, variant) {
      const row = original as BatchRow
      if (!row.do) return plain.missing?.(row, variant)
      if (!target.keys.payer) return 'no key payer (--key payer=0x…)'
      if (evmNetworks(target).length === 0) return 'the chain hook has no EVM RPC (--chain <rpc>)'
      if (row.do === 'claim' && !target.keys.overlord) return 'no key overlord (--key overlord=0x…)'
      if (row.do !== 'terms' && !run.life.current) return 'follows the terms row, which did not run on this target'
      return undefined
    },
    async run(original, variant, problems) {
      const row = original as BatchRow
      if (!row.do) {
        await plain.run(row, variant, problems)
        if (problems.length === 0) state = row.to
        return
      }
      if (row.from !== state) problems.push(`table out of order: machine is in ${state}, row starts in ${row.from}`)
      if (row.do !== 'terms' && !run.life.current?.channelId && row.do !== 'deposit') throw new Error('no channel: the deposit row did not pass')
      await steps[row.do](run, row, problems)
      if (problems.length === 0) state = row.to
    },
  }
}

/** A wallet session for `account` (challenge, signature). */
async function login(client: DriverClient, account: PrivateKeyAccount): Promise<string> {
  const challenge = await client.call('gateway', 'POST', '/users/challenge', { json: { wallet: account.address } })
  if (challenge.status !== 200) throw new Error(`login challenge → ${challenge.status} ${challenge.text.slice(0, 200)}`)
  const message = String(challenge.body.challenge)
  const session = await client.call('gateway', 'POST', '/users/register-with-signature', { json: { wallet: account.address, challenge: message, signature: await account.signMessage({ message }) } })
  if (session.status !== 200) throw new Error(`login → ${session.status} ${session.text.slice(0, 200)}`)
  return String(session.body.session_token)
}

/** The overlord's bearer (single-use challenge, signature, short JWT). */
async function bearer(client: DriverClient, overlord: PrivateKeyAccount): Promise<string> {
  const challenge = await client.call('gateway', 'POST', '/admin/shadow/challenge', { json: { scope: 'auth' } })
  if (challenge.status !== 200) throw new Error(`overlord challenge → ${challenge.status} ${challenge.text.slice(0, 200)}`)
  const verified = await client.call('gateway', 'POST', '/admin/shadow/verify', { json: { nonce: challenge.body.nonce, signature: await overlord.signMessage({ message: String(challenge.body.message) }) } })
  if (verified.status !== 200) throw new Error(`overlord verify → ${verified.status} ${verified.text.slice(0, 200)}`)
  return `Bearer ${String(verified.body.jwt)}`
}

function balanceOf(l: Pick<Lifecycle, 'publicClient' | 'requirement' | 'payer'>): Promise<bigint> {
  return l.publicClient.readContract({ address: l.requirement.asset as `0x${string}`, abi: erc20Abi, functionName: 'balanceOf', args: [l.payer.address] })
}

function chat(client: DriverClient, l: Lifecycle, payment: string): Promise<Reply> {
  return client.call('gateway', 'POST', '/llm/chat', { json: CHAT_BODY, headers: { 'x-session-token': l.session, 'PAYMENT-SIGNATURE': payment } })
}

/** One paid chat call as @x402/fetch makes it once it holds the 402: payload, header, call, the client's bookkeeping. */
async function paidChat(client: DriverClient, l: Lifecycle, problems: string[], what: string): Promise<{ payload: PaymentPayload; reply: Reply; settlement?: Settlement }> {
  const payload = await l.client.createPaymentPayload(l.required)
  const header = l.http402.encodePaymentSignatureHeader(payload)['PAYMENT-SIGNATURE']!
  const reply = await chat(client, l, header)
  await l.http402.processPaymentResult(payload, (name) => reply.headers.get(name), reply.status)
  l.last = header
  if (reply.status !== 200) {
    problems.push(`${what}: status ${reply.status}, expected 200: ${reply.text.slice(0, 300)}`)
    return { payload, reply }
  }
  const raw = reply.headers.get('PAYMENT-RESPONSE')
  if (!raw) {
    problems.push(`${what}: no PAYMENT-RESPONSE header`)
    return { payload, reply }
  }
  const settlement = decodePaymentResponseHeader(raw) as Settlement
  const config = (payload.payload as { channelConfig?: ChannelConfig }).channelConfig
  if (config) l.channelConfig = config
  const charged = settlement.extra?.channelState?.chargedCumulativeAmount
  if (!settlement.success || !settlement.amount) problems.push(`${what}: settlement ${JSON.stringify(settlement)}`)
  else {
    l.served += BigInt(settlement.amount)
    if (charged !== l.served.toString()) problems.push(`${what}: the channel's charged total is ${charged}, expected ${l.served} (what the calls were charged)`)
  }
  if (settlement.payer?.toLowerCase() !== l.payer.address.toLowerCase()) problems.push(`${what}: settled for payer ${settlement.payer}, expected ${l.payer.address}`)
  const channelId = settlement.extra?.channelState?.channelId as `0x${string}` | undefined
  if (l.channelId && channelId !== l.channelId) problems.push(`${what}: channel ${channelId}, expected the deposit's ${l.channelId}`)
  l.channelId ??= channelId
  return { payload, reply, settlement }
}

async function onChain(l: Lifecycle): Promise<{ balance: bigint; totalClaimed: bigint }> {
  const [balance, totalClaimed] = await readChannelBalanceAndTotalClaimed(l.signer, l.channelId!)
  return { balance, totalClaimed }
}

/** Each lifecycle row's step; `terms` starts the run's lifecycle, the others carry it on. */
const steps: Record<Step, (run: DriverRun, row: BatchRow, problems: string[]) => Promise<void>> = {
  async terms({ client, target, life: slot }, row, problems) {
    const network = evmNetworks(target)[0]!
    const rpcUrl = rpcsOf(target)[network]!
    const payer = target.keys.payer!
    const chain = defineChain({ id: Number(network.split(':')[1]), name: network, nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } })
    const publicClient = createPublicClient({ chain, transport: http(rpcUrl) })
    const reply = await client.call('gateway', 'GET', '/x402/batch-settlement/refund')
    problems.push(...expectProblems(reply, row.expect, {}))
    if (reply.status !== 402) return
    const http402 = new x402HTTPClient(new x402Client())
    const required = http402.getPaymentRequiredResponse((name) => reply.headers.get(name), reply.body)
    const requirement = required.accepts.find((a) => a.scheme === 'batch-settlement' && a.network === network)
    if (!requirement) return void problems.push(`the 402 offers no batch-settlement on ${network}: ${JSON.stringify(required.accepts.map((a) => `${a.scheme} ${a.network}`))}`)
    const extra = requirement.extra as Record<string, unknown>
    for (const field of ['receiverAuthorizer', 'withdrawDelay', 'minDeposit']) if (extra[field] === undefined) problems.push(`the requirement's extra lacks ${field}`)
    if (extra.assetTransferMethod !== 'eip3009') problems.push(`assetTransferMethod ${String(extra.assetTransferMethod)}, expected eip3009`)
    const signer = toClientEvmSigner(payer, publicClient)
    // A channel of this run only (its salt): a run never meets the state an earlier run left in its channel.
    const scheme = new BatchSettlementEvmScheme(signer, { salt: `0x${randomBytes(32).toString('hex')}` })
    // The stock client, allowed to pay this scheme only, in the asset the deployment asks for on this chain.
    const payClient = new x402Client((_v, accepts) => accepts.find((a) => a.scheme === 'batch-settlement' && a.network === network)!)
      .register('eip155:*', scheme)
      .setSpendControls({ allowedAssets: [{ network: network as `${string}:${string}`, asset: requirement.asset }] })
    const partial = { network, payer, publicClient, signer, required: { ...required, accepts: [requirement] }, requirement, client: payClient, http402: new x402HTTPClient(payClient), scheme, served: 0n }
    slot.current = { ...partial, session: await login(client, payer), before: await balanceOf(partial) }
  },

  async deposit({ client, life: slot }, _row, problems) {
    const l = slot.current!
    const { payload, settlement } = await paidChat(client, l, problems, 'the first paid call')
    const inner = payload.payload as { type?: string; deposit?: { amount?: string } }
    if (inner.type !== 'deposit' || !inner.deposit?.amount) return void problems.push(`the stock client sent a ${String(inner.type)} payload, expected its deposit`)
    l.deposit = BigInt(inner.deposit.amount)
    if (!settlement) return
    if (!/^0x[0-9a-fA-F]{64}$/.test(settlement.transaction ?? '')) problems.push(`the deposit's settlement names no transaction: ${JSON.stringify(settlement.transaction)}`)
    if (!l.channelId) return void problems.push('the settlement names no channel')
    const held = await onChain(l)
    if (held.balance !== l.deposit || held.totalClaimed !== 0n) problems.push(`on chain the channel holds ${held.balance} (claimed ${held.totalClaimed}), expected the deposit ${l.deposit} (claimed 0)`)
    const balance = await balanceOf(l)
    if (balance !== l.before - l.deposit) problems.push(`the payer's balance moved by ${l.before - balance}, expected the deposit ${l.deposit}`)
  },

  async vouchers({ client, life: slot }, row, problems) {
    const l = slot.current!
    const calls = row.calls ?? 1
    for (let i = 0; i < calls; i++) {
      const charged = l.served
      const { payload, settlement } = await paidChat(client, l, problems, `paid call ${i + 2}`)
      const inner = payload.payload as { type?: string; voucher?: { maxClaimableAmount?: string } }
      if (inner.type !== 'voucher') problems.push(`paid call ${i + 2}: the stock client sent a ${String(inner.type)} payload, expected a voucher`)
      const step = BigInt(l.requirement.amount)
      if (inner.voucher?.maxClaimableAmount !== (charged + step).toString()) problems.push(`paid call ${i + 2}: voucher of ${inner.voucher?.maxClaimableAmount}, expected the running total ${charged} + the step ${step}`)
      if (settlement && settlement.transaction !== '') problems.push(`paid call ${i + 2}: a voucher moved something on chain (transaction ${settlement.transaction})`)
    }
    const held = await onChain(l)
    if (held.balance !== l.deposit || held.totalClaimed !== 0n) problems.push(`on chain the channel holds ${held.balance} (claimed ${held.totalClaimed}), expected ${l.deposit} (claimed 0): vouchers move nothing`)
  },

  async replay({ client, life: slot }, row, problems) {
    const l = slot.current!
    const reply = await chat(client, l, l.last!)
    problems.push(...expectProblems(reply, row.expect, {}))
  },

  async 'lower-total'({ client, life: slot }, row, problems) {
    const l = slot.current!
    // what a client that lost count signs: the charged total, not one step above it
    const voucher = await signVoucher(l.signer, l.channelId!, l.served.toString(), l.network)
    const payload = { x402Version: 2, accepted: l.requirement, payload: { type: 'voucher', channelConfig: l.channelConfig, voucher } }
    const reply = await chat(client, l, Buffer.from(JSON.stringify(payload)).toString('base64'))
    problems.push(...expectProblems(reply, row.expect, {}))
    if (reply.status !== 402) return
    // the 402 carries the channel's state, from which the stock client resynchronises
    const accept = (reply.body?.accepts as PaymentRequirements[] | undefined)?.find((a) => a.scheme === 'batch-settlement' && a.network === l.network)
    const channelState = (accept?.extra as { channelState?: { channelId?: string; chargedCumulativeAmount?: string } } | undefined)?.channelState
    if (channelState?.channelId !== l.channelId || channelState?.chargedCumulativeAmount !== l.served.toString()) {
      problems.push(`the 402's channel state is ${JSON.stringify(channelState)}, expected channel ${l.channelId} charged ${l.served}`)
    }
  },

  async claim({ client, target, life: slot }, row, problems) {
    const l = slot.current!
    const reply = await client.call('gateway', 'POST', '/x402/batch-settlement/claims', { headers: { authorization: await bearer(client, target.keys.overlord!) } })
    problems.push(...expectProblems(reply, row.expect, {}))
    if (reply.status !== 200) return
    const run = (reply.body as ClaimRun).chains?.find((c) => c.network === l.network)
    if (run?.outcome !== 'ran') problems.push(`the claim job on ${l.network}: ${JSON.stringify(run)}, expected it ran`)
    const claims = run?.claims ?? []
    if (claims.length !== 1 || !/^0x[0-9a-fA-F]{64}$/.test(claims[0]!.transaction) || claims[0]!.vouchers < 1) {
      problems.push(`claims on ${l.network}: ${JSON.stringify(claims)}, expected one claim transaction carrying the channel's voucher`)
    }
    const held = await onChain(l)
    if (held.totalClaimed !== l.served || held.balance !== l.deposit) problems.push(`on chain the channel holds ${held.balance}, claimed ${held.totalClaimed}; expected ${l.deposit}, claimed ${l.served} (what was served)`)
  },

  async refund({ client, life: slot }, row, problems) {
    const l = slot.current!
    // the stock client's cooperative refund, its requests through the DocumentClient
    const viaDocument: typeof fetch = async (input, init) => {
      const request = new Request(input, init)
      const url = new URL(request.url)
      const headers: Record<string, string> = {}
      request.headers.forEach((value, name) => {
        headers[name] = value
      })
      const reply = await client.call('gateway', request.method, `${url.pathname}${url.search}`, { headers })
      return new Response(reply.text, { status: reply.status, headers: reply.headers })
    }
    const refunded = await l.scheme.refund(`${client.url('gateway')}/x402/batch-settlement/refund`, { fetch: viaDocument })
    const exchange = client.exchanges.at(-1)
    if (row.expect?.status !== undefined && exchange?.status !== row.expect.status) problems.push(`the refund answered ${exchange?.status}, expected ${row.expect.status}`)
    const unused = l.deposit! - l.served
    if (!refunded.success || refunded.amount !== unused.toString()) problems.push(`refund ${JSON.stringify(refunded)}, expected ${unused} (the deposit ${l.deposit} less the ${l.served} served)`)
    const held = await onChain(l)
    if (held.balance !== l.served) problems.push(`on chain the channel holds ${held.balance} after the refund, expected the ${l.served} claimed`)
  },

  async balance({ life: slot }, _row, problems) {
    const l = slot.current!
    const balance = await balanceOf(l)
    if (balance !== l.before - l.served) problems.push(`the payer's balance moved by ${l.before - balance}, expected exactly the ${l.served} served`)
  },
}
