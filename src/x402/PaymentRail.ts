import type { AlgorandExactRail } from './rails/algorand/AlgorandExactRail.js'
import type { EvmExactRail } from './rails/evm/EvmExactRail.js'
import type { PaymentRequirement } from './requirements.js'

/**
 * What a paid resource offers, whatever the rail: its URL, what it is, and its price in micro-USD. A rail
 * turns it into its requirement (x402's `SchemeNetworkServer` builds `PaymentRequirements` the same way from
 * a price and a network it was registered for).
 */
export type RailOffer = {
  resourceUrl: string
  description: string
  mimeType: string
  priceAtomic: bigint
  maxTimeoutSeconds: number
}

/**
 * One payment rail (scheme `exact` on one network), registered once at start in the `RailRegistry`, as x402
 * registers a `SchemeNetworkServer` with `register(network, scheme)`. The rail owns its network id, builds
 * its requirement, names the settings it misses, tells how its payments settle, and maps what it records to a
 * receipt currency code. Verification, settlement and recovery are on each kind (`EvmExactRail`,
 * `AlgorandExactRail`), which the callers tell apart by `kind`.
 */
export interface PaymentRailBase {
  readonly scheme: 'exact' | 'upto'
  /** The CAIP-2 network (Algorand's is known once its node told its genesis hash). */
  network(): Promise<string>
  /** A person's name for it (`USDC on Base`). */
  readonly label: string
  /** Environment settings it needs and lacks (empty: ready). */
  missingSettings(): string[]
  requirement(offer: RailOffer): Promise<PaymentRequirement>
  /** The receipt leaf's currency code of a payment it recorded in `asset`; undefined when it has none. */
  currencyCode(asset: string): number | undefined
  /**
   * `authorize-then-settle`: a payment can be verified, held and settled later or released (EIP-3009 through
   * a facilitator: cost calls settle once they produced output); `final`: paid once seen on the ledger.
   */
  readonly settlement: 'authorize-then-settle' | 'final'
}

/** A registered rail; callers tell the kinds apart by `kind` (`evm`: verify, settle later, recover; `algorand`: verify on the ledger). */
export type PaymentRail = EvmExactRail | AlgorandExactRail
