/**
 * The peers of the x402 `upto` tests (pay per token): a local Base chain (Anvil, the devnet USDC, Permit2 and
 * x402's `upto` proxy at their mainnet addresses), the devnet facilitator (@x402/evm's reference `upto`
 * facilitator), a live model server and the whole gateway with a quota of one cost call a day — and what the
 * tests do with them: pay with a stock x402 client, read balances, the usage report and the model server's own
 * count of the tokens it generated.
 */
import { randomBytes } from 'node:crypto'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types'
import { toClientEvmSigner } from '@x402/evm'
import { UptoEvmScheme } from '@x402/evm/upto/client'
import { createPublicClient, http } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { expect } from 'vitest'
import { anvilAccount, FACILITATOR_INDEX } from '../../devnet/accounts.js'
import { type LocalChain, startChain, usdcArtifact } from '../../devnet/chains/startChain.js'
import { type FacilitatorPeer, startFacilitator } from '../../devnet/facilitator/startFacilitator.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import type { Engine } from '../../src/modelserver/engine/Engine.js'
import { startTestGateway, type TestGateway } from '../support/startTestGateway.js'
import { startTestModelServer, type TestModelServer } from '../support/startTestModelServer.js'

/** Atomic units per completion token, the least and the most one call may cost. */
export type UptoPricing = { perToken: bigint; min: bigint; max: bigint }

export type UptoPeers = {
  chain: LocalChain
  facilitator: FacilitatorPeer
  engine: Engine
  ms: TestModelServer
  gw: TestGateway
  pricing: UptoPricing
  /** The service's receiving address. */
  payTo: `0x${string}`
  close: () => Promise<void>
}

export async function startUptoPeers(pricing: UptoPricing, env: Record<string, string> = {}): Promise<UptoPeers> {
  const token = randomBytes(32).toString('hex')
  const payTo = anvilAccount(8).address
  const chain = await startChain({ chainId: 8453 })
  const facilitator = await startFacilitator({ token, chains: [{ chainId: 8453, rpcUrl: chain.url }], signerPrivateKey: anvilAccount(FACILITATOR_INDEX).privateKey })
  const engine = await createEngine({ threads: 1 })
  const ms = await startTestModelServer({ engine })
  const gw = await startTestGateway({
    modelServerUrl: ms.url,
    env: {
      SERVICE_X402__FACILITATOR_URL: facilitator.url,
      FACILITATOR_TOKEN: token,
      SERVICE_X402__PAY_TO_EVM: payTo,
      SERVICE_X402__UPTO_FACILITATOR_ADDRESS: facilitator.signer,
      SERVICE_QUOTA__PRICE_PER_CALL_ATOMIC: '1500',
      SERVICE_QUOTA__PRICE_PER_TOKEN_ATOMIC: pricing.perToken.toString(),
      SERVICE_QUOTA__UPTO_MIN_PER_CALL_ATOMIC: pricing.min.toString(),
      SERVICE_QUOTA__UPTO_MAX_PER_CALL_ATOMIC: pricing.max.toString(),
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '1',
      SERVICE_LLM__MODELSERVER__TIMEOUT_MS: '30000',
      ...env,
    },
  })
  return {
    chain,
    facilitator,
    engine,
    ms,
    gw,
    pricing,
    payTo,
    close: async () => {
      await gw.close()
      await ms.close()
      await engine.dispose()
      await facilitator.close()
      await chain.close()
    },
  }
}

export type Usage = { totals: { calls: number; paid_calls: number; spend_atomic: string; completion_tokens: number }; quota: { used: number; limit: number }; upto: unknown }

/** What the tests do with the peers (`peers()`: the started ones, read at each call). */
export function uptoKit(peers: () => UptoPeers) {
  const pub = () => createPublicClient({ chain: peers().chain.chain, transport: http(peers().chain.url) })
  const post = (path: string, token: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${peers().gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-session-token': token, ...headers }, body: JSON.stringify(body), signal })

  /** A stock x402 client that pays `upto` only (payer: Anvil account `payer`), with the devnet USDC allowed. */
  const uptoClient = (payer: number, allowedAsset: string = peers().chain.tokenAddress): x402HTTPClient => {
    const signer = toClientEvmSigner(privateKeyToAccount(anvilAccount(payer).privateKey), pub())
    const client = new x402Client((_v, accepts) => accepts.find((a) => a.scheme === 'upto')!)
      .register('eip155:*', new UptoEvmScheme(signer))
      .setSpendControls({ allowedAssets: ['eip155:8453', 'eip155:1'].map((network) => ({ network: network as `${string}:${string}`, asset: allowedAsset })) })
    return new x402HTTPClient(client)
  }

  /** The `upto` payment payload for `required`, its requirement optionally altered before signing (what an attacker signs). */
  const uptoPayload = async (required: PaymentRequired, payer: number, alter?: (r: PaymentRequirements) => PaymentRequirements, allowedAsset?: string) => {
    const client = uptoClient(payer, allowedAsset)
    const accepts = alter ? required.accepts.map((a) => (a.scheme === 'upto' ? alter(a) : a)) : required.accepts
    return { client, payload: await client.createPaymentPayload({ ...required, accepts }) }
  }

  /** The `upto` payment header for the 402 `res`. */
  const uptoPayment = async (res: Response, payer: number, alter?: (r: PaymentRequirements) => PaymentRequirements, allowedAsset?: string): Promise<Record<string, string>> => {
    expect(res.status).toBe(402)
    const required = uptoClient(payer, allowedAsset).getPaymentRequiredResponse((n) => res.headers.get(n), await res.json())
    const { client, payload } = await uptoPayload(required, payer, alter, allowedAsset)
    return client.encodePaymentSignatureHeader(payload)
  }

  const chatBody = (numPredict: number, extra: Record<string, unknown> = {}) => ({ messages: [{ role: 'user', content: 'Tell me a long story' }], options: { num_predict: numPredict, seed: 3 }, ...extra })

  return {
    pub,
    post,
    uptoClient,
    uptoPayload,
    uptoPayment,
    chatBody,
    balanceOf: (who: `0x${string}`) => pub().readContract({ address: peers().chain.tokenAddress, abi: usdcArtifact().abi, functionName: 'balanceOf', args: [who] }) as Promise<bigint>,
    usageOf: async (token: string) => (await (await fetch(`${peers().gw.url}/llm/usage?days=1`, { headers: { 'x-session-token': token } })).json()) as Usage,
    /** A wallet whose one quota unit is used: its next cost call gets the 402. */
    walletPastQuota: async (): Promise<string> => {
      const token = await peers().gw.login(privateKeyToAccount(generatePrivateKey()))
      expect((await post('/llm/chat', token, chatBody(2))).status).toBe(200)
      return token
    },
    /** What `tokens` completion tokens settle: ⌈tokens × price⌉, at least the minimum, at most `cap`. */
    expectedFor: (tokens: number, cap = peers().pricing.max) => {
      const { perToken, min } = peers().pricing
      const cost = BigInt(tokens) * perToken
      const atLeast = cost < min ? min : cost
      return atLeast > cap ? cap : atLeast
    },
    /** The tokens the model server itself counts as generated so far (its `modelserver_generated_tokens_total`). */
    generatedTokens: async (): Promise<number> => {
      const text = await (await fetch(`${peers().ms.url}/metrics`)).text()
      return text
        .split('\n')
        .filter((line) => line.startsWith('modelserver_generated_tokens_total{'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
    },
  }
}

/** Waits until `check` holds (a stream settles after its last byte, asynchronously). */
export async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await read()
    if (check(v) || Date.now() > deadline) return v
    await new Promise((r) => setTimeout(r, 100))
  }
}
