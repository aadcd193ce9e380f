import type algosdk from 'algosdk'
import type { X402Config } from './config.js'
import type { PaymentRequirement } from './requirements.js'
import { createAlgodClient } from './rails/algorand/createAlgodClient.js'
import { registerAlgorandRail } from './rails/algorand/registerAlgorandRail.js'
import type { EvmUptoRail } from './rails/evm/EvmUptoRail.js'
import { registerEvmRails } from './rails/evm/registerEvmRails.js'
import { type DeferrableRail, isDeferrable, type Rail, type RailOffer } from './rails/Rail.js'

/** A rail and the requirement it built for one offer. */
export type RailRequirement = { rail: Rail; requirement: PaymentRequirement }

/** A rail registered beside the configured ones (a deployment's own, or a test's): one call at start. */
export type RailPlugin = (registry: RailRegistry, x402: X402Config) => void

/**
 * The payment rails of this process, registered once at start (x402's `register(network, scheme)`), in the
 * order the 402 lists them. Every paid route, the 402 builder, discovery, the quote, the `/storage/` page and
 * the readiness checks ask it; none asks which chain a rail is on. A new rail is one file plus its `register`
 * call (a `RailPlugin` handed to the app).
 */
export class RailRegistry {
  readonly #rails: Rail[] = []
  readonly #metered: EvmUptoRail[] = []

  /** A fixed-price rail: every paid route offers it. */
  register(rail: Rail): this {
    this.#rails.push(rail)
    return this
  }

  /** A rail that settles what a call turned out to cost, up to what was authorised: only metered routes offer it. */
  registerMetered(rail: EvmUptoRail): this {
    this.#metered.push(rail)
    return this
  }

  /** Whether a payment of `scheme` is for a metered rail (one registered, ready or not). */
  isMeteredScheme(scheme: string | undefined): boolean {
    return this.#metered.some((r) => r.scheme === scheme)
  }

  /** The ready metered rail of `scheme` on `network` (a payment's or a recorded debt's). */
  meteredRail(scheme: string | undefined, network: string): EvmUptoRail | undefined {
    return this.metered.find((r) => r.scheme === scheme && r.id === network)
  }

  /** The fixed-price rails (`exact`): what every paid route offers. */
  get rails(): readonly Rail[] {
    return this.#rails
  }

  /**
   * The `upto` rails, ready ones only (nothing missing): a route whose price is only known once it ran (a cost
   * call priced by the tokens it produced) offers them beside its `exact` rails; a fixed price (`/store`) never.
   */
  get metered(): EvmUptoRail[] {
    return this.#metered.filter((r) => r.missingSettings().length === 0)
  }

  /** The rails whose payments can be held and settled later (cost calls: `authorize-then-settle`). */
  get deferrable(): DeferrableRail[] {
    return this.#rails.filter(isDeferrable)
  }

  /** The `exact` rail of a network known without asking a node. */
  byId(network: string): Rail | undefined {
    return this.#rails.find((r) => r.id === network)
  }

  /** Every rail's missing settings, once each. */
  missingSettings(): string[] {
    return [...new Set(this.#rails.flatMap((r) => r.missingSettings()))]
  }

  /** The rails' ledger-node checks for readiness, by name. */
  healthChecks(timeoutMs: number): Record<string, () => Promise<void>> {
    const checks: Record<string, () => Promise<void>> = {}
    for (const rail of this.#rails) if (rail.health) checks[rail.health.name] = () => rail.health!.check(timeoutMs)
    return checks
  }

  /** The requirements of `offer` on `rails` (default: all), in registration order. */
  async requirements(offer: RailOffer, rails: readonly Rail[] = this.#rails): Promise<RailRequirement[]> {
    return Promise.all(rails.map(async (rail) => ({ rail, requirement: await rail.requirement(offer) })))
  }
}

/**
 * The rails of the configuration — one `exact` EVM rail per EVM network of networks.ts, then Algorand, then one
 * `upto` rail per EVM network (metered cost calls, ready when the `upto` facilitator address is configured) —
 * and then `plugins`, each one call. `algod`: the client the Algorand rail polls (default: the configured node).
 */
export function createRailRegistry(x402: X402Config, algod?: algosdk.Algodv2, plugins: readonly RailPlugin[] = []): RailRegistry {
  const registry = new RailRegistry()
  registerEvmRails(registry, x402, 'exact')
  registerAlgorandRail(registry, x402, algod ?? createAlgodClient(x402.algodUrl, x402.algodToken))
  registerEvmRails(registry, x402, 'upto')
  for (const plugin of plugins) plugin(registry, x402)
  return registry
}
