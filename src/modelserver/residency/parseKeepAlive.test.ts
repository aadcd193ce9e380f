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
  it('rejects garbage with a 400', () => {
    expect(() => parseKeepAlive('soon', fallback)).toThrow(expect.objectContaining({ status: 400 }))
    expect(() => parseKeepAlive(true, fallback)).toThrow(expect.objectContaining({ status: 400 }))
  })
})
