import { describe, expect, it } from 'vitest'
import { clampKeepAlive, KeepAliveError } from './clampKeepAlive.js'

const bounds = { minS: 60, maxS: 1800 }

describe('clampKeepAlive', () => {
  it('keeps a value within the bounds, in seconds', () => {
    expect(clampKeepAlive('5m', bounds)).toBe(300)
    expect(clampKeepAlive(120, bounds)).toBe(120)
    expect(clampKeepAlive('90', bounds)).toBe(90)
  })

  it('refuses to unload a shared model: 0 becomes the floor', () => {
    expect(clampKeepAlive(0, bounds)).toBe(60)
    expect(clampKeepAlive('0s', bounds)).toBe(60)
    expect(clampKeepAlive('1ms', bounds)).toBe(60)
  })

  it('refuses to pin a shared model: forever and long values become the ceiling', () => {
    expect(clampKeepAlive(-1, bounds)).toBe(1800)
    expect(clampKeepAlive('-1m', bounds)).toBe(1800)
    expect(clampKeepAlive('24h', bounds)).toBe(1800)
  })

  it('leaves an absent value absent', () => {
    expect(clampKeepAlive(undefined, bounds)).toBeUndefined()
  })

  it('rejects what is not a duration', () => {
    expect(() => clampKeepAlive('forever', bounds)).toThrow(KeepAliveError)
    expect(() => clampKeepAlive(Number.NaN, bounds)).toThrow(KeepAliveError)
    expect(() => clampKeepAlive({ s: 1 }, bounds)).toThrow(KeepAliveError)
  })
})
