import { describe, expect, it } from 'vitest'
import { parseKeepAlive } from './parseKeepAlive.js'

describe('parseKeepAlive', () => {
  const fallback = 300_000
  it('reads durations, seconds, 0 and negatives', () => {
    expect(parseKeepAlive(undefined, fallback)).toBe(fallback)
    expect(parseKeepAlive('5m', fallback)).toBe(300_000)
    expect(parseKeepAlive('1h30m', fallback)).toBe(5_400_000)
    expect(parseKeepAlive('1.5s', fallback)).toBe(1500)
    expect(parseKeepAlive('250ms', fallback)).toBe(250)
    expect(parseKeepAlive(3600, fallback)).toBe(3_600_000)
    expect(parseKeepAlive('3600', fallback)).toBe(3_600_000)
    expect(parseKeepAlive(0, fallback)).toBe(0)
    expect(parseKeepAlive('0', fallback)).toBe(0)
    expect(parseKeepAlive(-1, fallback)).toBe(Infinity)
    expect(parseKeepAlive('-1m', fallback)).toBe(Infinity)
  })
  it("refuses a duration longer than Go's longest with a 400, as Ollama does (an expiry that far is no date: every later /api/ps failed)", () => {
    expect(parseKeepAlive('2562047h', fallback)).toBe(2_562_047 * 3_600_000)
    for (const huge of ['9999999999h', '2562048h', 99999999999999999999, '99999999999999999999', 1e308]) {
      expect(() => parseKeepAlive(huge, fallback), String(huge)).toThrow(expect.objectContaining({ status: 400 }))
    }
  })
  it('rejects garbage with a 400', () => {
    expect(() => parseKeepAlive('soon', fallback)).toThrow(expect.objectContaining({ status: 400 }))
    expect(() => parseKeepAlive(true, fallback)).toThrow(expect.objectContaining({ status: 400 }))
  })
})
