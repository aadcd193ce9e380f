import { computePrice, type Price } from '../x402/price.js'
import type { UpstreamRates } from './UpstreamClient.js'

/** One reading of the upstream's prices (`/v1/rates` and the price of 1 MiB) and when it was taken (ms). */
export type PricingSnapshot = { at: number; rates: UpstreamRates; wincPerMiB: bigint }

export function priceOf(snapshot: PricingSnapshot, sizeBytes: bigint): Price {
  return computePrice({ wincPerMiB: snapshot.wincPerMiB, rateWinc: snapshot.rates.winc, rateUsd: snapshot.rates.usd, sizeBytes })
}

/**
 * Quoted prices stay good for `holdMs` (`SERVICE_STORAGE__QUOTE_VALIDITY_S`): every snapshot a quote or a
 * 402 was priced from is kept until `holdMs` after it was last quoted, and a payment is accepted when it
 * covers the price under the current snapshot *or* under any snapshot still held — so a payment made from a
 * quote is not refused because the upstream's rates moved in between. Kept in memory: each instance honours
 * the quotes it gave (rates are the upstream's, so instances quote alike).
 */
export class PriceHold {
  readonly holdMs: number
  readonly #held = new Map<number, { snapshot: PricingSnapshot; until: number }>()

  constructor(holdMs: number) {
    this.holdMs = holdMs
  }

  /** Records that `snapshot` was quoted at `nowMs`; returns until when (ms) that quote holds. */
  quoted(snapshot: PricingSnapshot, nowMs = Date.now()): number {
    const until = nowMs + this.holdMs
    this.#held.set(snapshot.at, { snapshot, until })
    return until
  }

  /** Snapshots whose quotes still hold at `nowMs` (expired ones are dropped). */
  honoured(nowMs = Date.now()): PricingSnapshot[] {
    const live: PricingSnapshot[] = []
    for (const [at, entry] of this.#held) {
      if (entry.until < nowMs) this.#held.delete(at)
      else live.push(entry.snapshot)
    }
    return live
  }

  /** Every price a payment for `sizeBytes` may cover at `nowMs`: the current one and the held ones, cheapest first. */
  acceptablePrices(current: PricingSnapshot, sizeBytes: bigint, nowMs = Date.now()): Price[] {
    const byAtomic = new Map<bigint, Price>()
    for (const s of [current, ...this.honoured(nowMs)]) {
      const p = priceOf(s, sizeBytes)
      if (!byAtomic.has(p.atomic)) byAtomic.set(p.atomic, p)
    }
    return [...byAtomic.values()].sort((a, b) => (a.atomic < b.atomic ? -1 : a.atomic > b.atomic ? 1 : 0))
  }
}
