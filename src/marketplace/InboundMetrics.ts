/**
 * Rolling inbound-traffic window for `GET /api/monitoring/inbound`: requests per minute, latency
 * percentiles (ms) and bytes in/out over the last `windowS` seconds. Memory is bounded by a ring of at most
 * `maxSamples` recent requests.
 */
export type InboundSample = { at: number; durationMs: number; bytesIn: number; bytesOut: number }

export class InboundMetrics {
  private samples: InboundSample[] = []
  constructor(
    readonly windowS = 60,
    private readonly maxSamples = 50_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  record(sample: Omit<InboundSample, 'at'>): void {
    this.samples.push({ at: this.nowMs(), ...sample })
    if (this.samples.length > this.maxSamples) this.samples.splice(0, this.samples.length - this.maxSamples)
  }

  snapshot() {
    const since = this.nowMs() - this.windowS * 1000
    this.samples = this.samples.filter((s) => s.at >= since)
    const durations = this.samples.map((s) => s.durationMs).sort((a, b) => a - b)
    const pick = (q: number) => (durations.length === 0 ? 0 : round(durations[Math.min(durations.length - 1, Math.ceil(q * durations.length) - 1)]!))
    return {
      window_s: this.windowS,
      requests_per_minute: round((this.samples.length * 60) / this.windowS),
      latency_ms: { p50: pick(0.5), p95: pick(0.95), p99: pick(0.99) },
      bytes_in: this.samples.reduce((n, s) => n + s.bytesIn, 0),
      bytes_out: this.samples.reduce((n, s) => n + s.bytesOut, 0),
    }
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000
}
