/**
 * The price of a metered cost call (x402 `upto`): the tokens it produced × a price per token,
 * never below the least a call costs, never above what the payer authorised.
 */
export type TokenPricing = {
  /** Price of one produced token in millionths of an atomic unit (`0.25` atomic = 250000): 0 = metering off. */
  perTokenMicro: bigint
  /** The least a call that ran costs, zero tokens included (its prompt was read; an embedding produces none). */
  minAtomic: bigint
  /** The most one call may cost: the `amount` of the `upto` requirement. */
  maxAtomic: bigint
}

const MICRO = 1_000_000n

/**
 * What a call that produced `tokens` completion tokens costs, in atomic units: ⌈tokens × price⌉ (a fraction of
 * an atomic unit is rounded up: integer amounts only), at least `minAtomic`, at most `capAtomic` (the payer's
 * authorised maximum, itself ≤ `maxAtomic`).
 */
export function meteredAmount(pricing: TokenPricing, tokens: number, capAtomic: bigint): bigint {
  const count = BigInt(Math.max(0, Math.floor(tokens)))
  const product = count * pricing.perTokenMicro
  const cost = product / MICRO + (product % MICRO === 0n ? 0n : 1n)
  const floor = cost < pricing.minAtomic ? pricing.minAtomic : cost
  return floor > capAtomic ? capAtomic : floor
}

/** The most tokens a call may produce for `capAtomic`: ⌊cap ÷ price⌋ (so tokens × price never exceeds it). */
export function maxTokensFor(pricing: TokenPricing, capAtomic: bigint): number {
  if (pricing.perTokenMicro <= 0n) return Number.MAX_SAFE_INTEGER
  const n = (capAtomic * MICRO) / pricing.perTokenMicro
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n)
}

/** Parses a price per token in atomic units with up to six decimals (`2`, `0.25`) into millionths. */
export function parsePerTokenMicro(text: string): bigint | undefined {
  const m = /^(\d{1,24})(?:\.(\d{1,6}))?$/.exec(text.trim())
  if (!m) return undefined
  return BigInt(m[1] as string) * MICRO + BigInt((m[2] ?? '').padEnd(6, '0') || '0')
}
