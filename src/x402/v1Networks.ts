import { EVM_NETWORKS } from './networks.js'

/**
 * x402 version 1 names networks by chain name; version 2 by CAIP-2 id. The v1 names are those of the
 * reference v1 packages, kept with each network in networks.ts; no v1 name exists for Algorand.
 */
const V1_NAMES: ReadonlyMap<string, { name: string; offered: boolean }> = new Map(EVM_NETWORKS.map((n) => [n.network, { name: n.name, offered: n.v1Offered }]))

const CAIP2_OF_V1: ReadonlyMap<string, string> = new Map([...V1_NAMES].map(([caip2, v]) => [v.name, caip2]))

/** The v1 name of a CAIP-2 network, or undefined when v1 has none. */
export function v1NetworkName(caip2: string): string | undefined {
  return V1_NAMES.get(caip2)?.name
}

/** True when the v1 answer lists this CAIP-2 network (see `EvmNetwork.v1Offered`). */
export function isOfferedToV1(caip2: string): boolean {
  return V1_NAMES.get(caip2)?.offered === true
}

/** The CAIP-2 id of a network named in a v1 payload; CAIP-2 ids pass through unchanged. */
export function caip2Network(network: string): string {
  return CAIP2_OF_V1.get(network) ?? network
}
