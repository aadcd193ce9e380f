/**
 * Deterministic, configurable Turbo-like pricing. Prices are linear in bytes:
 *   winc(n) = ceil(n × wincPerGiB / 2^30)
 * `fiat` gives the price of one GiB in each currency, so `GET /v1/rates` = `{winc: wincPerGiB, fiat}`
 * (USD per winc = fiat.usd / winc). Data items of at most `freeBytes` (Turbo's 100 KiB) cost nothing to upload.
 */
export interface Pricing {
  wincPerGiB: bigint
  fiat: Record<string, number>
  freeBytes: number
}

export const GIB = 1n << 30n

export const DEFAULT_PRICING: Pricing = {
  // ≈ real Turbo magnitudes: 2.0e12 winc (2 AR) and $10.00 per GiB.
  wincPerGiB: 2_000_000_000_000n,
  fiat: { usd: 10, eur: 9.2, gbp: 7.9, cad: 13.7, aud: 15.3, jpy: 1480, inr: 835, sgd: 13.4, hkd: 78, brl: 50.5 },
  freeBytes: 102_400,
}

export function priceBytes(p: Pricing, bytes: bigint): bigint {
  if (bytes <= 0n) return 0n
  return (bytes * p.wincPerGiB + GIB - 1n) / GIB
}

export function uploadCost(p: Pricing, itemBytes: number): bigint {
  return itemBytes <= p.freeBytes ? 0n : priceBytes(p, BigInt(itemBytes))
}

/** Winc bought by `atomic` units of a 6-decimal USD stablecoin at the configured USD rate. */
export function wincForUsdAtomic(p: Pricing, atomic: bigint): bigint {
  const usd = p.fiat.usd
  if (!usd || usd <= 0) throw new Error('pricing has no positive fiat.usd rate')
  const microUsdPerGiB = BigInt(Math.round(usd * 1_000_000))
  return (atomic * p.wincPerGiB) / microUsdPerGiB
}
