/**
 * The rails `pay2store store --rail` pays on, rail name → network: the EVM rails by CAIP-2 id; Algorand is
 * `algorand:<genesis hash>` of whatever node the gateway uses, so only its prefix is known here.
 */
import { EVM_NETWORKS } from '../x402/evmNetworks.js'

export const RAILS: ReadonlyMap<string, string> = new Map([...EVM_NETWORKS.map((n) => [n.name, n.network] as const), ['algorand', 'algorand:']])

/** Whether `network` (a requirement's) is on `rail`. */
export function onRail(rail: string, network: string): boolean {
  return rail === 'algorand' ? network.startsWith(RAILS.get('algorand')!) : network === RAILS.get(rail)
}
