/**
 * x402 version 1 names networks by chain name; version 2 by CAIP-2 id. The names below are the ones the
 * reference v1 packages use for the two EVM rails of this service.
 *
 * `offered`: the v1 answer lists only networks every stock v1 client knows. The v1 client libraries
 * validate each element of `accepts` against their own network enum and give up on the whole answer when
 * one element is unknown: `x402` 1.2 (used by `x402-fetch` and `x402-axios`) knows `base` but not
 * `ethereum`, and no v1 name exists for Algorand. A v1 payment on `ethereum` is still accepted.
 */
const V1_NAMES: ReadonlyMap<string, { name: string; offered: boolean }> = new Map([
  ['eip155:8453', { name: 'base', offered: true }],
  ['eip155:1', { name: 'ethereum', offered: false }],
])

const CAIP2_OF_V1: ReadonlyMap<string, string> = new Map([...V1_NAMES].map(([caip2, v]) => [v.name, caip2]))

/** The v1 name of a CAIP-2 network, or undefined when v1 has none. */
export function v1NetworkName(caip2: string): string | undefined {
  return V1_NAMES.get(caip2)?.name
}

/** True when the v1 answer lists this CAIP-2 network (see `offered`). */
export function isOfferedToV1(caip2: string): boolean {
  return V1_NAMES.get(caip2)?.offered === true
}

/** The CAIP-2 id of a network named in a v1 payload; CAIP-2 ids pass through unchanged. */
export function caip2Network(network: string): string {
  return CAIP2_OF_V1.get(network) ?? network
}
