import { authorizationTypes } from '@x402/evm'
import { createPublicClient, http, isAddressEqual, parseAbi, type PublicClient, recoverTypedDataAddress } from 'viem'
import { BriefCache } from '../../BriefCache.js'
import { InvalidPaymentError } from '../../errors.js'
import type { EvmPayment } from './evmRail.js'
import type { EvmExactRail } from './EvmExactRail.js'
import { InvalidPaymentReasons } from '../../reasons.js'

/**
 * Whether a payment is believable before anything is spent on it: `verified` (signed by its payer, nonce
 * unused, funds there — `release` gives back what it holds of the payer's balance), or not verifiable now
 * (`verified: false`, `why`: the chain could not be read) — such a payer is served from a small pool only.
 * An unbelievable payment is refused (402) instead.
 */
export type PayerBelief = { verified: true; release: () => void } | { verified: false; why: string; release: () => void }

const tokenAbi = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
])
const nothing = () => {}

export type EvmPayerCheckOptions = {
  /** How long a balance or nonce read is reused (ms; `SERVICE_STORAGE__PAYER_CHECK_CACHE_MS`). */
  cacheMs: number
  /** Longest wait for the chain (ms); past it the payer is not verifiable now. */
  timeoutMs?: number
}

/**
 * The EIP-3009 payer check of an upload before it gets a slot or a spool file (a structurally valid header
 * costs an attacker nothing; a believable one costs a signature of a funded payer):
 *
 * 1. the EIP-712 signature recovered locally (viem) must be `authorization.from`'s — or, when it is not (a
 *    contract wallet signs ERC-1271 / ERC-6492), the chain must say it is valid for `from`;
 * 2. one batched JSON-RPC read (cached `cacheMs`, keyed by network, token, payer and nonce): the nonce is unused
 *    (`authorizationState`) and the balance covers the authorised value plus what this payer's other uploads in
 *    flight here authorised (each holds its value until its slot is given back).
 *
 * The rail's chain is `SERVICE_X402__RPC_URL__<NETWORK>`; without one, or when it does not answer, the payer is
 * not verifiable (`verified: false`).
 */
export class EvmPayerCheck {
  readonly #timeoutMs: number
  readonly #balances: BriefCache<bigint>
  readonly #nonces: BriefCache<boolean>
  readonly #clients = new Map<string, PublicClient>()
  /**
   * Authorisations of uploads in flight, per network, token and payer, by nonce (one authorization sent
   * twice at once can be spent only once: it counts once).
   */
  readonly #held = new Map<string, Map<string, { value: bigint; uploads: number }>>()

  constructor(o: EvmPayerCheckOptions) {
    this.#timeoutMs = o.timeoutMs ?? 3_000
    this.#balances = new BriefCache<bigint>(o.cacheMs)
    this.#nonces = new BriefCache<boolean>(o.cacheMs)
  }

  async believe(rail: EvmExactRail, payment: EvmPayment): Promise<PayerBelief> {
    const a = payment.authorization
    const from = a.from as `0x${string}`
    const asset = rail.options.asset as `0x${string}`
    const typed = {
      domain: { name: rail.options.tokenName, version: rail.options.tokenVersion, chainId: Number(rail.id.slice('eip155:'.length)), verifyingContract: asset },
      types: authorizationTypes,
      primaryType: 'TransferWithAuthorization' as const,
      message: { from, to: a.to as `0x${string}`, value: a.value, validAfter: a.validAfter, validBefore: a.validBefore, nonce: a.nonce as `0x${string}` },
      signature: payment.signature as `0x${string}`,
    }
    const signedByFrom = await recoverTypedDataAddress(typed).then(
      (signer) => isAddressEqual(signer, from),
      () => false,
    )
    const client = this.#client(rail)
    if (!client) return { verified: false, why: `no SERVICE_X402__RPC_URL__ for ${rail.id}`, release: nothing }
    const key = `${rail.id}|${asset.toLowerCase()}|${from.toLowerCase()}`
    let read: [boolean, bigint, boolean]
    try {
      // one batch: the calls of this turn go out in one JSON-RPC request
      read = await Promise.all([
        signedByFrom ? Promise.resolve(true) : client.verifyTypedData({ ...typed, address: from }),
        this.#balances.get(key, () => client.readContract({ address: asset, abi: tokenAbi, functionName: 'balanceOf', args: [from] })),
        this.#nonces.get(`${key}|${a.nonce}`, () => client.readContract({ address: asset, abi: tokenAbi, functionName: 'authorizationState', args: [from, a.nonce as `0x${string}`] })),
      ])
    } catch (error) {
      return { verified: false, why: `the chain of ${rail.id} did not answer: ${String(error).slice(0, 200)}`, release: nothing }
    }
    const [signed, balance, used] = read
    if (!signed) throw new InvalidPaymentError(InvalidPaymentReasons.invalidSignature, 'the signature is not authorization.from\'s: the authorization was not signed by its payer')
    if (used) throw new InvalidPaymentError(InvalidPaymentReasons.authorizationUsed, 'authorization.nonce is already used or cancelled on chain')
    const inFlight = this.#held.get(key) ?? new Map<string, { value: bigint; uploads: number }>()
    const same = inFlight.get(a.nonce)
    let others = 0n
    for (const [nonce, h] of inFlight) if (nonce !== a.nonce) others += h.value
    if (balance < others + a.value) {
      throw new InvalidPaymentError(
        InvalidPaymentReasons.insufficientFunds,
        `the payer's balance (${balance}) does not cover authorization.value ${a.value}${others > 0n ? ` beside the ${others} its other uploads in flight here authorised` : ''}`,
      )
    }
    inFlight.set(a.nonce, { value: same && same.value > a.value ? same.value : a.value, uploads: (same?.uploads ?? 0) + 1 })
    this.#held.set(key, inFlight)
    let released = false
    return {
      verified: true,
      release: () => {
        if (released) return
        released = true
        const h = inFlight.get(a.nonce)
        if (h && h.uploads > 1) h.uploads--
        else inFlight.delete(a.nonce)
        if (inFlight.size === 0 && this.#held.get(key) === inFlight) this.#held.delete(key)
      },
    }
  }

  #client(rail: EvmExactRail): PublicClient | undefined {
    const url = rail.options.rpcUrl
    if (!url) return undefined
    let client = this.#clients.get(rail.id)
    if (!client) {
      client = createPublicClient({ transport: http(url, { batch: true, timeout: this.#timeoutMs, retryCount: 0 }) }) as PublicClient
      this.#clients.set(rail.id, client)
    }
    return client
  }
}
