/**
 * The rails `pay2store store --rail` pays on, rail name → network, from the network table: the EVM rails by
 * CAIP-2 id; Algorand is `algorand:<genesis hash>` of whatever node the gateway uses, so only its prefix is known here.
 */
import { knownNetwork, NETWORKS } from '../x402/networks.js'

export const RAILS: ReadonlyMap<string, string> = new Map(NETWORKS.map((n) => [n.name, n.caip2] as const))

/** The default `--rail`, whose accounts sign in (`pay2store login`). */
export const SIGN_IN_RAIL = 'base'

/** Whether `network` (a requirement's) is on `rail`. */
export function onRail(rail: string, network: string): boolean {
  return knownNetwork(network)?.name === rail
}
