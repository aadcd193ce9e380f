/**
 * Price of a paid upload (seed 4.6 step 2), in exact rational arithmetic:
 *
 *   upstream_cost_usd = winc(1 MiB) × usd_per_winc / 1,048,576 × size_bytes
 *   usd_per_winc      = rates.fiat.usd / rates.winc            (the upstream's fiat rate)
 *   price_usd         = round(upstream_cost_usd × 1.25 + 0.005, 6)   (half-up)
 *   atomic            = integer part of price_usd × 10⁶         (exact, as price_usd has 6 decimals)
 *
 * No float ever takes part: decimal inputs are parsed to bigint fractions.
 */
export const MIB = 1_048_576n

/** The least any upload costs, in atomic units: the 0.005 USD every price adds to the upstream's cost. */
export const LEAST_UPLOAD_PRICE_ATOMIC = 5_000n

export type Fraction = { n: bigint; d: bigint }

/** Parses a non-negative decimal (`"12.5"`, `"1e-7"`, `3`) to an exact fraction. */
export function parseDecimal(value: string | number | bigint): Fraction {
  if (typeof value === 'bigint') {
    if (value < 0n) throw new RangeError('negative amount')
    return { n: value, d: 1n }
  }
  const text = typeof value === 'number' ? numberToText(value) : value.trim()
  const m = /^(\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$|^\.(\d+)(?:[eE]([+-]?\d+))?$/.exec(text)
  if (!m) throw new RangeError(`not a non-negative decimal: ${JSON.stringify(value)}`)
  const intPart = m[1] ?? '0'
  const fracPart = m[1] !== undefined ? (m[2] ?? '') : (m[4] ?? '')
  const exp = Number(m[1] !== undefined ? (m[3] ?? '0') : (m[5] ?? '0'))
  let n = BigInt(intPart + fracPart)
  let d = 10n ** BigInt(fracPart.length)
  if (exp > 0) n *= 10n ** BigInt(exp)
  else if (exp < 0) d *= 10n ** BigInt(-exp)
  return { n, d }
}

function numberToText(value: number): string {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`not a non-negative finite number: ${value}`)
  return String(value)
}

export type PriceInput = {
  /** `GET {payment_url}/v1/price/bytes/1048576` → winc. */
  wincPerMiB: bigint
  /** `GET {payment_url}/v1/rates` → `winc` (the winc amount the fiat figures are quoted for). */
  rateWinc: bigint
  /** `GET {payment_url}/v1/rates` → `fiat.usd` (USD for `rateWinc` winc). */
  rateUsd: string | number
  sizeBytes: bigint
}

export type Price = {
  /** Micro-USD = atomic units of a 6-decimal stable coin. */
  atomic: bigint
  /** `price_usd` as text, as used in the Algorand request binding (see formatPriceUsd). */
  usd: string
  /** Exact upstream cost in USD before margin. */
  upstreamCostUsd: Fraction
}

export function computePrice({ wincPerMiB, rateWinc, rateUsd, sizeBytes }: PriceInput): Price {
  if (rateWinc <= 0n) throw new RangeError('rates.winc must be positive')
  if (wincPerMiB < 0n || sizeBytes < 0n) throw new RangeError('negative price input')
  const usd = parseDecimal(rateUsd)
  // cost = wincPerMiB × usd.n × size / (usd.d × rateWinc × MIB)
  const costN = wincPerMiB * usd.n * sizeBytes
  const costD = usd.d * rateWinc * MIB
  // micro = round((cost × 1.25 + 0.005) × 10⁶) = round((cost × 1_250_000) + 5_000), half-up
  const xN = costN * 1_250_000n + 5_000n * costD
  const atomic = (2n * xN + costD) / (2n * costD)
  return { atomic, usd: formatPriceUsd(atomic), upstreamCostUsd: { n: costN, d: costD } }
}

/**
 * `price_usd` text from micro-USD: shortest decimal with at least one fractional digit (what Python's
 * `str(round(x, 6))` prints for these magnitudes): 5000 → `0.005`, 1_000_000 → `1.0`, 1_234_560 → `1.23456`.
 */
export function formatPriceUsd(atomic: bigint): string {
  if (atomic < 0n) throw new RangeError('negative price')
  const whole = atomic / 1_000_000n
  let frac = (atomic % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '')
  if (frac === '') frac = '0'
  return `${whole}.${frac}`
}
