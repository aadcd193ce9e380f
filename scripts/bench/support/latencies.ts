/**
 * Request latencies kept at full resolution. autocannon's own histogram stores whole milliseconds (HDR
 * histogram, lowest discernible value 1, values truncated), so a 0.4 ms p50 prints as 0 and a p99/p50 ratio
 * of its figures means little; the benchmark records each response's duration (ms, float, from
 * `process.hrtime`) and takes percentiles here.
 */
export class Latencies {
  #values = new Float64Array(4096)
  #count = 0

  add(ms: number): void {
    if (this.#count === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2)
      grown.set(this.#values)
      this.#values = grown
    }
    this.#values[this.#count++] = ms
  }

  get count(): number {
    return this.#count
  }

  /** Nearest-rank percentiles (`q` in 0..100), e.g. `[50, 99]`; NaN when nothing was recorded. */
  percentiles(qs: readonly number[]): number[] {
    const sorted = this.#values.slice(0, this.#count).sort()
    return qs.map((q) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((q / 100) * sorted.length) - 1))]!))
  }
}
