import algosdk from 'algosdk'
import { type Address, getAddress, isAddress, keccak256 } from 'viem'

/**
 * Every network this service knows, EVM and Algorand: the one place in src/ that names their ids, their USDC,
 * their receipt currency codes and their CLI names. Everything else — the configuration
 * (`SERVICE_X402__ASSET__<SUFFIX>`, `SERVICE_X402__RPC_URL__<SUFFIX>`), the rails registered at start, v1
 * names, the `/storage/` page's labels, the CLI's `--rail` names and units, and the receipt leaf's currency
 * code and payer — is read from here (or from the rail registry built from here).
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

/** CAIP-2 namespace of Algorand: `algorand:<genesis hash>` of whatever node the gateway uses. */
export const ALGORAND_NAMESPACE = 'algorand'

/** Algorand: USDC is one ASA; native ALGO counts only at an operator-set rate. No v1 name exists for it. */
export const ALGORAND_NETWORK = {
  /** The CLI's `--rail` name. */
  name: 'algorand',
  label: 'USDC on Algorand',
  /** USDC's ASA id on Algorand mainnet. */
  usdcAssetId: 31566704n,
  /** Receipt currency codes (docs/design.md): the USDC ASA and native ALGO. */
  currency: { usdc: 3, algo: 4 },
} as const

export function isEvmNetwork(network: string): boolean {
  return network.startsWith(`${EVM_NAMESPACE}:`)
}

export function isAlgorandNetwork(network: string): boolean {
  return network.startsWith(`${ALGORAND_NAMESPACE}:`)
}

export function evmNetwork(network: string): EvmNetwork | undefined {
  return EVM_NETWORKS.find((n) => n.network === network)
}

/** The settings suffix of a network: `eip155:8453` → `EIP155_8453`. */
export function envSuffix(network: string): string {
  return network.replace(':', '_').toUpperCase()
}

/** An amount's unit as a person reads it (the CLI): `USDC`, 6 decimals. */
export type AssetUnit = { symbol: string; decimals: number }
const USDC: AssetUnit = { symbol: 'USDC', decimals: 6 }
const ALGO: AssetUnit = { symbol: 'ALGO', decimals: 6 }

/**
 * One known network as the callers that do not hold a rail ask it (the receipt leaf, the CLI): whether a
 * CAIP-2 id is on it, its receipt currency code and payer mapping, and its units. Looked up with `knownNetwork`.
 */
export type KnownNetwork = {
  /** The CLI's `--rail` name. */
  name: string
  label: string
  /** The CAIP-2 id, or its prefix when the id depends on the node (Algorand's genesis hash). */
  caip2: string
  matches(network: string): boolean
  /** The receipt currency code of a payment recorded in `asset`; undefined when it has none. */
  currency(asset: string): number | undefined
  /** The receipt leaf's payer: an EVM address (docs/design.md "Paid storage"); throws when `payer` is not one of this network's. */
  receiptPayer(payer: string): Address
  /** The unit of a requirement's amount in `asset`; undefined when the CLI does not know the asset. */
  unit(asset: string): AssetUnit | undefined
  /** The units of the receipt currency codes it issues. */
  currencyUnits: ReadonlyMap<number, AssetUnit>
}

function evmPayer(payer: string): Address {
  if (!isAddress(payer, { strict: false })) throw new Error(`not an EVM address: ${payer}`)
  return getAddress(payer)
}

function evmKnown(n: EvmNetwork): KnownNetwork {
  return {
    name: n.name,
    label: n.label,
    caip2: n.network,
    matches: (network) => network === n.network,
    currency: () => n.currency,
    receiptPayer: evmPayer,
    unit: (asset) => (asset.toLowerCase() === n.usdc ? USDC : undefined),
    currencyUnits: new Map([[n.currency, USDC]]),
  }
}

const algorandKnown: KnownNetwork = {
  name: ALGORAND_NETWORK.name,
  label: ALGORAND_NETWORK.label,
  caip2: `${ALGORAND_NAMESPACE}:`,
  matches: isAlgorandNetwork,
  currency: (asset) => {
    if (asset === ALGORAND_NETWORK.usdcAssetId.toString()) return ALGORAND_NETWORK.currency.usdc
    if (asset === 'ALGO' || asset === '0') return ALGORAND_NETWORK.currency.algo
    return undefined
  },
  /** The last 20 bytes of keccak256 of the account's 32-byte public key. */
  receiptPayer: (payer) => {
    let publicKey: Uint8Array
    try {
      // base32 is case-insensitive; ledgers written before the fix hold Algorand payers lower-cased
      publicKey = algosdk.decodeAddress(payer.toUpperCase()).publicKey
    } catch {
      throw new Error(`not an Algorand address: ${payer}`)
    }
    return getAddress(`0x${keccak256(publicKey).slice(-40)}`)
  },
  // the gateway prices its ASA requirement in micro-USD of USDC
  unit: () => USDC,
  currencyUnits: new Map([
    [ALGORAND_NETWORK.currency.usdc, USDC],
    [ALGORAND_NETWORK.currency.algo, ALGO],
  ]),
}

/** Every known network, in the order the 402 lists their rails. */
export const NETWORKS: readonly KnownNetwork[] = [...EVM_NETWORKS.map(evmKnown), algorandKnown]

/** The known network a CAIP-2 id is on, if any. */
export function knownNetwork(network: string): KnownNetwork | undefined {
  return NETWORKS.find((n) => n.matches(network))
}

/** The receipt leaf's payer of a payment on `network`: any EVM chain's payer is its address; undefined: no mapping. */
export function receiptPayerOf(network: string): ((payer: string) => Address) | undefined {
  return knownNetwork(network)?.receiptPayer ?? (isEvmNetwork(network) ? evmPayer : undefined)
}
