import { describe, expect, it } from 'vitest'
import { InboundMetrics } from './InboundMetrics.js'

describe('InboundMetrics', () => {
  it('reports requests per minute, latency percentiles and bytes over the window', () => {
    let now = 1_000_000
    const m = new InboundMetrics(60, 1000, () => now)
    for (let i = 1; i <= 100; i++) m.record({ durationMs: i, bytesIn: 10, bytesOut: 100 })
    expect(m.snapshot()).toEqual({
      window_s: 60,
      requests_per_minute: 100,
      latency_ms: { p50: 50, p95: 95, p99: 99 },
      bytes_in: 1000,
      bytes_out: 10_000,
    })
    now += 61_000
    expect(m.snapshot()).toEqual({ window_s: 60, requests_per_minute: 0, latency_ms: { p50: 0, p95: 0, p99: 0 }, bytes_in: 0, bytes_out: 0 })
  })

  it('keeps only the most recent maxSamples requests', () => {
    let now = 0
    const m = new InboundMetrics(60, 3, () => now)
    for (const d of [100, 200, 1, 2, 3]) {
      now += 10
      m.record({ durationMs: d, bytesIn: d, bytesOut: 0 })
    }
    const s = m.snapshot()
    expect(s.requests_per_minute).toBe(3)
    expect(s.latency_ms.p99).toBe(3)
    expect(s.bytes_in).toBe(6)
  })

  it('drops samples that left the window while keeping newer ones', () => {
    let now = 0
    const m = new InboundMetrics(10, 100, () => now)
    m.record({ durationMs: 500, bytesIn: 1, bytesOut: 1 })
    now = 9_000
    m.record({ durationMs: 7, bytesIn: 2, bytesOut: 3 })
    now = 10_500
    expect(m.snapshot()).toMatchObject({ requests_per_minute: 6, latency_ms: { p50: 7, p99: 7 }, bytes_in: 2, bytes_out: 3 })
  })
})
