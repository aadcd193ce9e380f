import { ConfigError } from '../../../config/ConfigError.js'

/**
 * Native ALGO on the Algorand rail (seed 4.6: "an asset transfer of asset 31566704 or a native payment"). Prices
 * are micro-USD; a native payment is micro-ALGO, so it counts only through a rate the operator sets
 * (`SERVICE_X402__ALGO_USD_RATE`, USD per ALGO, e.g. `0.18`). Without one, native payments are refused: taking
 * micro-ALGO at face value would sell $1 of storage for 1 ALGO at any ALGO price. The operator owns the rate's
 * freshness (a stale high rate undercharges); the 402 shows the rate and the micro-ALGO amount it yields.
 */
export type AlgoUsdRate = {
  /** As configured (for the 402). */
  text: string
  /** Micro-USD per ALGO (10⁶ micro-ALGO). */
  microUsdPerAlgo: bigint
}

const DECIMAL = /^(\d{1,12})(?:\.(\d{1,6}))?$/

/** `SERVICE_X402__ALGO_USD_RATE`: a positive decimal with at most six fractional digits; undefined when unset. */
export function parseAlgoUsdRate(text: string | undefined, name = 'SERVICE_X402__ALGO_USD_RATE'): AlgoUsdRate | undefined {
  if (text === undefined || text.trim() === '') return undefined
  const m = DECIMAL.exec(text.trim())
  if (!m) throw new ConfigError(name, `not a decimal USD price of one ALGO with at most 6 decimals: ${text}`)
  const microUsdPerAlgo = BigInt(m[1]!) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0') || '0')
  if (microUsdPerAlgo <= 0n) throw new ConfigError(name, 'must be above zero')
  return { text: text.trim(), microUsdPerAlgo }
}

/** The micro-ALGO that pay `priceAtomic` micro-USD at `rate`, rounded up (never below the price). */
export function nativeAlgoAmount(priceAtomic: bigint, rate: AlgoUsdRate): bigint {
  const numerator = priceAtomic * 1_000_000n
  return (numerator + rate.microUsdPerAlgo - 1n) / rate.microUsdPerAlgo
}
