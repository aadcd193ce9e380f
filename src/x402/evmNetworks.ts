/**
 * The EVM networks this service knows: the one place in src/ that names their ids. Everything else — the
 * configuration (`SERVICE_X402__ASSET__<SUFFIX>`, `SERVICE_X402__RPC_URL__<SUFFIX>`), the rails registered at
 * start, v1 names, the `/storage/` page's labels, the CLI's `--rail` names and the receipt leaf's currency
 * code — is read from here (or from the rail registry built from here).
 */
export type EvmNetwork = {
  /** CAIP-2, `eip155:<chainId>`. */
  network: `eip155:${number}`
  chainId: number
  /** The CLI's `--rail` name, also the v1 (x402 version 1) network name. */
  name: string
  /**
   * The v1 answer lists only networks every stock v1 client knows: `x402` 1.2 (x402-fetch, x402-axios) knows
   * `base` but not `ethereum` and gives up on a whole answer with one unknown element. A v1 payment on an
   * unlisted network is still accepted.
   */
  v1Offered: boolean
  /** What a person reads (the `/storage/` page). */
  label: string
  /** The receipt leaf's currency code (docs/design.md "Paid storage"). */
  currency: number
  /** The canonical USDC contract (lower-cased): the only asset a stock x402 client pays here by default. */
  usdc: `0x${string}`
}

export const EVM_NETWORKS: readonly EvmNetwork[] = [
  { network: 'eip155:8453', chainId: 8453, name: 'base', v1Offered: true, label: 'USDC on Base', currency: 1, usdc: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' },
  { network: 'eip155:1', chainId: 1, name: 'ethereum', v1Offered: false, label: 'USDC on Ethereum', currency: 2, usdc: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
]

/** CAIP-2 namespace of the EVM rails. */
export const EVM_NAMESPACE = 'eip155'

export function isEvmNetwork(network: string): boolean {
  return network.startsWith(`${EVM_NAMESPACE}:`)
}

export function evmNetwork(network: string): EvmNetwork | undefined {
  return EVM_NETWORKS.find((n) => n.network === network)
}

/** The settings suffix of a network: `eip155:8453` → `EIP155_8453`. */
export function envSuffix(network: string): string {
  return network.replace(':', '_').toUpperCase()
}
