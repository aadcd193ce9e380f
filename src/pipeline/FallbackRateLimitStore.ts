import type { RateLimitHit, RateLimitStore } from './MemoryRateLimitStore.js'

/**
 * A shared store with a second shared store behind it (`SERVICE_RATE_LIMIT__STORE=redis`: Redis, then the
 * gateway's database): a hit the first cannot count (Redis down, a command timed out) is counted by the
 * second, so replicas that all lose Redis still agree, through the database they share. Counting moves
 * between the two with no carry-over: for the window in which Redis goes away (or comes back) an address can
 * get up to twice its limit. A hit neither can count fails, and the rate-limit stage lets that request through
 * (the limit is a guard, not a gate). `onFallback` is told when counting moves to the second store and back.
 */
export class FallbackRateLimitStore implements RateLimitStore {
  #usingFallback = false

  constructor(
    private readonly primary: RateLimitStore,
    private readonly fallback: RateLimitStore,
    private readonly onSwitch?: (state: { fallback: boolean; error?: unknown }) => void,
  ) {}

  async hit(key: string, windowMs: number, nowMs: number): Promise<RateLimitHit> {
    try {
      const hit = await this.primary.hit(key, windowMs, nowMs)
      if (this.#usingFallback) {
        this.#usingFallback = false
        this.onSwitch?.({ fallback: false })
      }
      return hit
    } catch (error) {
      if (!this.#usingFallback) {
        this.#usingFallback = true
        this.onSwitch?.({ fallback: true, error })
      }
      return this.fallback.hit(key, windowMs, nowMs)
    }
  }

  /** Whether the last hit was counted by the fallback. */
  get usingFallback(): boolean {
    return this.#usingFallback
  }
}
