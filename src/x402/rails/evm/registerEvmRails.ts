import type { X402Config } from '../../config.js'
import { EVM_NETWORKS } from '../../networks.js'
import type { RailRegistry } from '../../RailRegistry.js'
import { EvmExactRail } from './EvmExactRail.js'
import { EvmUptoRail } from './EvmUptoRail.js'

/**
 * One EVM rail of `scheme` per EVM network of the network table: `exact` (EIP-3009 through the facilitator)
 * or `upto` (Permit2, metered cost calls).
 */
export function registerEvmRails(registry: RailRegistry, x402: X402Config, scheme: 'exact' | 'upto'): void {
  for (const n of EVM_NETWORKS) {
    const common = { network: n.network, label: n.label, currency: n.currency, asset: x402.assets[n.network] ?? '', tokenName: x402.tokenName, tokenVersion: x402.tokenVersion, payTo: x402.payToEvm }
    const rpcUrl = x402.evmRpcUrls[n.network]
    if (scheme === 'exact') registry.register(new EvmExactRail({ ...common, rpcUrl }))
    else registry.registerMetered(new EvmUptoRail({ ...common, facilitatorAddress: x402.uptoFacilitatorAddress, ...(rpcUrl ? { rpcUrl } : {}) }))
  }
}
