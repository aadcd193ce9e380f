/**
 * x402 v2 facilitator for the local chains, built on the reference packages: `x402Facilitator`
 * (@x402/core/facilitator) with one `ExactEvmScheme` (@x402/evm/exact/facilitator) per chain, each with a
 * viem wallet client for that chain as its signer (account 1 of the Anvil mnemonic pays the gas).
 *
 *   GET  /supported                 → {kinds: [{x402Version, scheme, network}], extensions, signers}
 *   POST /verify {x402Version, paymentPayload, paymentRequirements} → VerifyResponse
 *   POST /settle {x402Version, paymentPayload, paymentRequirements} → SettleResponse
 *
 * Schemes: `exact` (EIP-3009), `upto` (Permit2, @x402/evm's reference facilitator code: verify simulates the
 * proxy's `settle`, settle transfers `paymentRequirements.amount` ≤ the permitted amount; `/supported` lists
 * the signer as `extra.facilitatorAddress`, which an `upto` permit must name) and `batch-settlement` (the
 * reference code on the devnet's escrow: `/verify` checks a deposit or voucher against the channel on chain,
 * `/settle` deposits, claims a batch, sweeps to the receiver or refunds).
 * x402 v1 payloads are accepted too, on the v1 network names (`base` for 8453, `ethereum` for 1).
 * Every route requires `Authorization: Bearer <token>` (401 otherwise). Invalid payments answer 200 with
 * `isValid: false` / `success: false` like the reference facilitator; malformed bodies answer 400.
 * Settles of one authorization (payer, nonce, network) are serialised, and a payload whose authorization
 * was already settled is rejected (`invalid_exact_evm_nonce_already_used`) — on chain the token also
 * refuses it (`FiatTokenV2: authorization is used or canceled`).
 * Settles of different authorizations run concurrently, but every transaction the signer submits on one
 * chain goes through that chain's queue (nonce read, sign, broadcast — not the wait for the receipt), so
 * concurrent settles by different payers never reuse the signer's nonce ("nonce too low"). A submission
 * that fails before broadcasting uses no nonce, so the sequence never has a gap.
 */
import { timingSafeEqual } from 'node:crypto'
import { InMemoryPendingSettlementStore, x402Facilitator } from '@x402/core/facilitator'
import type { Network, PaymentPayload, PaymentRequirements } from '@x402/core/types'
import { toFacilitatorEvmSigner } from '@x402/evm'
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator'
import { ExactEvmScheme } from '@x402/evm/exact/facilitator'
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/facilitator'
import { UptoEvmScheme } from '@x402/evm/upto/facilitator'
import { createWalletClient, http, publicActions } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { localChain } from '../chains/startChain.js'
import { HttpError, Router, sendJson, serve } from '../http.js'

export interface FacilitatorChain {
  chainId: number
  rpcUrl: string
}

export interface FacilitatorOptions {
  port?: number
  token: string
  chains: FacilitatorChain[]
  /** Private key of the account that submits settlements (needs ETH on every chain). */
  signerPrivateKey: `0x${string}`
}

export interface FacilitatorPeer {
  url: string
  port: number
  signer: `0x${string}`
  close(): Promise<void>
}

const V1_NETWORK_NAMES: Record<number, string> = { 8453: 'base', 1: 'ethereum' }

function bearerOk(header: string | undefined, token: string): boolean {
  if (!header) return false
  const m = /^Bearer\s+(.+)$/i.exec(header.trim())
  if (!m) return false
  const a = Buffer.from(m[1] as string)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

interface Body {
  x402Version: number
  paymentPayload: PaymentPayload
  paymentRequirements: PaymentRequirements
}

function parseBody(buf: Buffer): Body {
  let v: unknown
  try {
    v = JSON.parse(buf.toString('utf8'))
  } catch {
    throw new HttpError(400, 'body is not JSON', { error: 'invalid_request', message: 'body is not JSON' })
  }
  const o = v as Partial<Body>
  const missing = (['x402Version', 'paymentPayload', 'paymentRequirements'] as const).filter(
    (k) => o?.[k] === undefined || o?.[k] === null,
  )
  if (missing.length > 0 || typeof o.paymentPayload !== 'object' || typeof o.paymentRequirements !== 'object') {
    const message = `missing or invalid field(s): ${missing.join(', ') || 'paymentPayload/paymentRequirements'}`
    throw new HttpError(400, message, { error: 'invalid_request', message })
  }
  return o as Body
}

/** Runs the tasks given to it one at a time, in order; a failed task does not stop the next. */
export function serialQueue(): <T>(task: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve()
  return <T>(task: () => Promise<T>): Promise<T> => {
    const run = tail.then(() => task())
    tail = run.catch(() => undefined)
    return run
  }
}

function authorizationKey(p: PaymentPayload, r: PaymentRequirements): string | undefined {
  const auth = (p.payload as { authorization?: { from?: string; nonce?: string } } | undefined)?.authorization
  if (!auth?.from || !auth.nonce) return undefined
  return `${r.network}|${String(r.asset).toLowerCase()}|${auth.from.toLowerCase()}|${auth.nonce.toLowerCase()}`
}

export async function startFacilitator(opts: FacilitatorOptions): Promise<FacilitatorPeer> {
  const account = privateKeyToAccount(opts.signerPrivateKey)
  const facilitator = new x402Facilitator()
  // x402 pending settlements: a settle whose broadcast was not confirmed in time answers `settlement_pending`
  // with its transaction; the retry of the same payload reconciles against that broadcast (one store for the
  // `exact`, `upto` and `batch-settlement` deposits of every chain: keys are the payloads' signatures).
  const pendingSettlements = new InMemoryPendingSettlementStore()
  const pendingWaits = { remaining: 0 }
  for (const chain of opts.chains) registerChain(facilitator, chain, { account, pendingSettlements, pendingWaits })
  const router = facilitatorRoutes(facilitator, opts.token, pendingWaits)
  const listening = await serve(router, { port: opts.port, name: 'facilitator' })
  return { url: listening.url, port: listening.port, signer: account.address, close: listening.close }
}

type ChainSetup = {
  account: ReturnType<typeof privateKeyToAccount>
  pendingSettlements: InMemoryPendingSettlementStore
  /** How many of the next receipt waits fail as a confirmation that does not come in time (`POST /__devnet/pending`). */
  pendingWaits: { remaining: number }
}

/** One chain's signer (its transactions through one queue) and the schemes registered on its network. */
function registerChain(facilitator: x402Facilitator, c: FacilitatorChain, { account, pendingSettlements, pendingWaits }: ChainSetup): void {
  const client = createWalletClient({
    account,
    chain: localChain(c.chainId, c.rpcUrl),
    transport: http(c.rpcUrl, { retryCount: 0 }),
    pollingInterval: 100,
  }).extend(publicActions)
  const submit = serialQueue()
  const signer = toFacilitatorEvmSigner(
    {
      ...client,
      address: account.address,
      writeContract: ((args: never) => submit(() => client.writeContract(args))) as typeof client.writeContract,
      sendTransaction: ((args: never) => submit(() => client.sendTransaction(args))) as typeof client.sendTransaction,
      // the test hook `POST /__devnet/pending`: a broadcast whose confirmation does not come in time
      waitForTransactionReceipt: ((args: never) => {
        if (pendingWaits.remaining > 0) {
          pendingWaits.remaining--
          return Promise.reject(new Error('devnet: the receipt did not come in time (POST /__devnet/pending)'))
        }
        return client.waitForTransactionReceipt(args)
      }) as typeof client.waitForTransactionReceipt,
    } as never,
    { confirmationTimeoutMs: 30_000 },
  )
  facilitator.register(`eip155:${c.chainId}`, new ExactEvmScheme(signer, { pendingSettlementStore: pendingSettlements }))
  // `upto` (Permit2 witness transfer through x402's proxy, placed by devnet/chains/placePermit2.ts): settles
  // any amount up to the permitted one, once; the permit names this signer as the only settler.
  facilitator.register(`eip155:${c.chainId}`, new UptoEvmScheme(signer, { pendingSettlementStore: pendingSettlements }))
  // `batch-settlement` (x402's escrow, placed by devnet/chains/placeBatchSettlement.ts): deposits, batched
  // voucher claims, the sweep to the receiver and refunds, each relayed with the signatures the resource server
  // sends. No receiver authorizer of its own is advertised: a server signs its own claims and refunds, so this
  // facilitator can neither claim nor refund for anyone.
  facilitator.register(`eip155:${c.chainId}`, new BatchSettlementEvmScheme(signer, undefined, { pendingSettlementStore: pendingSettlements }))
  // x402 v1 names the networks (`base`, `ethereum`); stock v1 clients pay with those.
  const v1Name = V1_NETWORK_NAMES[c.chainId]
  if (v1Name) facilitator.registerV1(v1Name as Network, new ExactEvmSchemeV1(signer))
}

/** The facilitator's HTTP routes, every one behind the bearer token. */
function facilitatorRoutes(facilitator: x402Facilitator, token: string, pendingWaits: { remaining: number }): Router {
  const settled = new Map<string, string>() // authorization key → settlement tx hash
  const router = new Router()
  router.before = (req) => {
    if (!bearerOk(req.headers.authorization, token)) {
      throw new HttpError(401, 'missing or invalid bearer token', {
        error: 'unauthorized',
        message: 'Authorization: Bearer <FACILITATOR_TOKEN> required',
      })
    }
  }
  router.get('/supported', (_req, res) => sendJson(res, 200, facilitator.getSupported()))
  // Test hook: the next `times` waits for a settlement's receipt fail as a confirmation that does not come in
  // time does, so the reference schemes answer `settlement_pending` (the transaction is broadcast and lands).
  router.post('/__devnet/pending', async (req, res) => {
    const body = JSON.parse((await req.body(1 << 10)).toString('utf8') || '{}') as { times?: unknown }
    const times = typeof body.times === 'number' && Number.isSafeInteger(body.times) && body.times >= 0 ? body.times : 1
    pendingWaits.remaining = times
    sendJson(res, 200, { pending: times })
  })
  router.post('/verify', async (req, res) => {
    const { paymentPayload, paymentRequirements } = parseBody(await req.body(1 << 20))
    const key = authorizationKey(paymentPayload, paymentRequirements)
    if (key && settled.has(key)) {
      const payer = (paymentPayload.payload as { authorization: { from: string } }).authorization.from
      sendJson(res, 200, { isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', payer })
      return
    }
    try {
      sendJson(res, 200, await facilitator.verify(paymentPayload, paymentRequirements))
    } catch (e) {
      sendJson(res, 400, { isValid: false, invalidReason: 'invalid_payload', invalidMessage: (e as Error).message })
    }
  })
  const settleOnce = serialSettles(facilitator, settled)
  router.post('/settle', async (req, res) => {
    const { status, body } = await settleOnce(parseBody(await req.body(1 << 20)))
    sendJson(res, status, body)
  })
  return router
}

type SettleAnswer = { status: number; body: unknown }

/**
 * Settles a payload at most once per authorization: settles of the same authorization are serialised so
 * concurrent duplicates cannot both broadcast, and one already settled is refused as a used nonce.
 */
function serialSettles(facilitator: x402Facilitator, settled: Map<string, string>): (body: Body) => Promise<SettleAnswer> {
  const inflight = new Map<string, Promise<SettleAnswer>>()
  return async ({ paymentPayload, paymentRequirements }) => {
    const key = authorizationKey(paymentPayload, paymentRequirements)
    const payer = (paymentPayload.payload as { authorization?: { from?: string } })?.authorization?.from ?? ''
    const refusal = (errorReason: string, errorMessage?: string) => ({
      success: false,
      errorReason,
      ...(errorMessage === undefined ? {} : { errorMessage }),
      payer,
      transaction: '',
      network: paymentRequirements.network,
    })
    const run = async (): Promise<SettleAnswer> => {
      if (key && settled.has(key)) return { status: 200, body: refusal('invalid_exact_evm_nonce_already_used') }
      try {
        const result = await facilitator.settle(paymentPayload, paymentRequirements)
        if (key && result.success && result.transaction) settled.set(key, result.transaction)
        return { status: 200, body: result }
      } catch (e) {
        return { status: 400, body: refusal('invalid_payload', (e as Error).message) }
      }
    }
    const prev = key ? inflight.get(key) : undefined
    const p = (prev ?? Promise.resolve()).catch(() => undefined).then(run)
    if (key) inflight.set(key, p)
    try {
      return await p
    } finally {
      if (key && inflight.get(key) === p) inflight.delete(key)
    }
  }
}
