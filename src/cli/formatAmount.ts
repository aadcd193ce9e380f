import { type AssetUnit, knownNetwork, NETWORKS } from '../x402/networks.js'

/**
 * One human form for an amount everywhere the CLI prints one: `0.008492 USDC`. Exact (bigint, never a float),
 * trailing zeros dropped. The unit comes from what the gateway says was paid: a receipt's `currency` code, or a
 * requirement's network and asset (the network table says which). An asset the CLI does not know prints as what
 * it is: atomic units of that asset.
 */
export type { AssetUnit }

/** The receipt's `currency` (openapi/gateway.yaml Receipt): 1 USDC on Base, 2 USDC on Ethereum, 3 USDC ASA, 4 ALGO. */
const BY_CURRENCY = new Map<number, AssetUnit>(NETWORKS.flatMap((n) => [...n.currencyUnits]))

export function unitOfCurrency(currency: number): AssetUnit | undefined {
  return BY_CURRENCY.get(currency)
}

/** EVM: the canonical USDC of the network; Algorand: the gateway prices its ASA requirement in micro-USD of USDC. */
export function unitOfRequirement(network: string, asset: string): AssetUnit | undefined {
  return knownNetwork(network)?.unit(asset)
}

export function formatAmount(atomic: string | number | bigint, unit: AssetUnit | undefined, asset = 'an unknown asset'): string {
  const value = BigInt(atomic)
  if (!unit) return `${value} atomic units of ${asset}`
  const negative = value < 0n
  const digits = (negative ? -value : value).toString().padStart(unit.decimals + 1, '0')
  const whole = digits.slice(0, digits.length - unit.decimals)
  const fraction = digits.slice(digits.length - unit.decimals).replace(/0+$/, '')
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''} ${unit.symbol}`
}
