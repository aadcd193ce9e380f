/**
 * Answers remembered for a few seconds (chain and node reads a flood of requests would repeat), keyed by
 * everything that decides the answer. Concurrent asks of one key share one read; a failed read is not kept.
 * Bounded: past `maxEntries` the expired entries go, then the oldest.
 */
export class BriefCache<T> {
  readonly #entries = new Map<string, { value: Promise<T>; expires: number }>()

  constructor(
    readonly ttlMs: number,
    readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string, read: () => Promise<T>): Promise<T> {
    const t = this.now()
    const hit = this.#entries.get(key)
    if (hit && hit.expires > t) return hit.value
    const value = read()
    this.#entries.delete(key)
    this.#entries.set(key, { value, expires: t + this.ttlMs })
    value.catch(() => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key)
    })
    this.#prune(t)
    return value
  }

  #prune(t: number): void {
    if (this.#entries.size <= this.maxEntries) return
    for (const [key, entry] of this.#entries) if (entry.expires <= t) this.#entries.delete(key)
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.maxEntries) break
      this.#entries.delete(key)
    }
  }
}
