/** One counted request: how many the key has made in its current window, and when that window ends. */
export type RateLimitHit = { count: number; resetAtMs: number }

/**
 * Where the limiter keeps its counters. In memory per process by default; a store shared by several gateway
 * processes (Redis, the database) implements the same method and may answer asynchronously.
 */
export interface RateLimitStore {
  /** Counts one request of `key` at `nowMs`; a key's window is `windowMs` long from its first request. */
  hit(key: string, windowMs: number, nowMs: number): RateLimitHit | Promise<RateLimitHit>
}

/**
 * Fixed windows per key in two generations of `Map`s, O(1) per request and no timer at all: every `windowMs`
 * (checked on the next hit) the current generation becomes the previous one and the old previous one is
 * dropped whole. A key whose window is still open when its generation ages is carried over on its next hit; a
 * key two generations old started at least one window ago, so its window is over and dropping it loses
 * nothing. Memory: the addresses seen in the last two windows.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  private current = new Map<string, RateLimitHit>()
  private previous = new Map<string, RateLimitHit>()
  private rotateAtMs = Number.NEGATIVE_INFINITY

  hit(key: string, windowMs: number, nowMs: number): RateLimitHit {
    if (nowMs >= this.rotateAtMs) {
      // More than one window since the last rotation: both generations are over.
      this.previous = nowMs >= this.rotateAtMs + windowMs ? new Map() : this.current
      this.current = new Map()
      this.rotateAtMs = nowMs + windowMs
    }
    let entry = this.current.get(key)
    if (!entry) {
      entry = this.previous.get(key)
      if (entry) this.previous.delete(key)
      if (!entry || entry.resetAtMs <= nowMs) entry = { count: 0, resetAtMs: nowMs + windowMs }
      this.current.set(key, entry)
    } else if (entry.resetAtMs <= nowMs) {
      entry.count = 0
      entry.resetAtMs = nowMs + windowMs
    }
    entry.count++
    return entry
  }

  /** Keys held (both generations), for tests and diagnostics. */
  get size(): number {
    return this.current.size + this.previous.size
  }
}
