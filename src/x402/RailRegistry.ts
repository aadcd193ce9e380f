import type algosdk from 'algosdk'
import { withDeadline } from '../shared/withDeadline.js'
import { AlgorandExactRail } from './rails/algorand/AlgorandExactRail.js'
import type { X402Config } from './config.js'
import { LedgerNodeUnavailableError } from './errors.js'
import { EVM_NETWORKS } from './networks.js'
import { EvmExactRail } from './rails/evm/EvmExactRail.js'
import { EvmUptoRail } from './rails/evm/EvmUptoRail.js'
import type { PaymentRail, RailOffer } from './PaymentRail.js'
import type { PaymentRequirement } from './requirements.js'

/** A rail and the requirement it built for one offer. */
export type RailRequirement = { rail: PaymentRail; requirement: PaymentRequirement }

/**
 * The payment rails of this process, registered once at start (x402's `register(network, scheme)`), in the
 * order the 402 lists them. Every paid route, the 402 builder, discovery, the quote, the `/storage/` page, the
 * CLI's choices and the receipt leaf ask it; a new rail is one file plus its `register` call.
 */
export class RailRegistry {
  readonly #rails: PaymentRail[] = []
  readonly #metered: EvmUptoRail[] = []

  /** A fixed-price rail (`exact`) goes to `rails`; an `upto` rail to `metered` (only metered routes offer it). */
  register(rail: PaymentRail | EvmUptoRail): this {
    if (rail.kind === 'evm-upto') this.#metered.push(rail)
    else this.#rails.push(rail)
    return this
  }

  /** The fixed-price rails (`exact`): what every paid route offers. */
  get rails(): readonly PaymentRail[] {
    return this.#rails
  }

  /**
   * The `upto` rails, ready ones only (nothing missing): a route whose price is only known once it ran (a cost
   * call priced by the tokens it produced) offers them beside its `exact` rails; a fixed price (`/store`) never.
   */
  get metered(): EvmUptoRail[] {
    return this.#metered.filter((r) => r.missingSettings().length === 0)
  }

  uptoRail(network: string): EvmUptoRail | undefined {
    return this.metered.find((r) => r.id === network)
  }

  /** The rails whose payments can be held and settled later (cost calls: `authorize-then-settle`). */
  get deferrable(): EvmExactRail[] {
    return this.#rails.filter((r): r is EvmExactRail => r.settlement === 'authorize-then-settle' && r.kind === 'evm')
  }

  evm(network: string): EvmExactRail | undefined {
    return this.#rails.find((r): r is EvmExactRail => r.kind === 'evm' && r.id === network)
  }

  /** Every rail's missing settings, once each. */
  missingSettings(): string[] {
    return [...new Set(this.#rails.flatMap((r) => r.missingSettings()))]
  }

  /** The requirements of `offer` on `rails` (default: all), in registration order. */
  async requirements(offer: RailOffer, rails: readonly PaymentRail[] = this.#rails): Promise<RailRequirement[]> {
    return Promise.all(rails.map(async (rail) => ({ rail, requirement: await rail.requirement(offer) })))
  }
}

/**
 * The rails of the configuration: one `exact` EVM rail per network of networks.ts, then Algorand; and one
 * `upto` rail per EVM network (metered cost calls), ready when the `upto` facilitator address is configured.
 * `algod`: the client the Algorand rail polls; its network id comes from `SERVICE_ALGOD__GENESIS_HASH` or,
 * unset, from the node (once, cached; retried after a failure).
 */
export function createRailRegistry(x402: X402Config, algod: algosdk.Algodv2): RailRegistry {
  const registry = new RailRegistry()
  for (const n of EVM_NETWORKS) {
    registry.register(
      new EvmExactRail({
        network: n.network,
        label: n.label,
        currency: n.currency,
        asset: x402.assets[n.network] ?? '',
        tokenName: x402.tokenName,
        tokenVersion: x402.tokenVersion,
        payTo: x402.payToEvm,
        rpcUrl: x402.evmRpcUrls[n.network],
      }),
    )
  }
  for (const n of EVM_NETWORKS) {
    registry.register(
      new EvmUptoRail({
        network: n.network,
        label: n.label,
        ...(n.currency === undefined ? {} : { currency: n.currency }),
        asset: x402.assets[n.network] ?? '',
        tokenName: x402.tokenName,
        tokenVersion: x402.tokenVersion,
        payTo: x402.payToEvm,
        facilitatorAddress: x402.uptoFacilitatorAddress,
        ...(x402.evmRpcUrls[n.network] ? { rpcUrl: x402.evmRpcUrls[n.network] } : {}),
      }),
    )
  }
  let genesis: Promise<string> | undefined = x402.algodGenesisHash ? Promise.resolve(x402.algodGenesisHash) : undefined
  const network = async () => {
    genesis ??= withDeadline(algod.getTransactionParams().do(), 10_000, 'algod')
      .then((p) => Buffer.from(p.genesisHash ?? new Uint8Array()).toString('base64'))
      .catch((error) => {
        genesis = undefined
        throw new LedgerNodeUnavailableError(error)
      })
    return `algorand:${await genesis}`
  }
  registry.register(
    new AlgorandExactRail({
      algod,
      network,
      payTo: x402.payToAlgorand,
      algoUsdRate: x402.algoUsdRate,
      pollIntervalMs: x402.algodPollIntervalMs,
      timeoutMs: x402.algodTimeoutMs,
    }),
  )
  return registry
}
