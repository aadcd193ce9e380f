import { describe, expect, it } from 'vitest'
import { soakBand } from './soakBand.js'

describe('soakBand', () => {
  it('judges every minute against minute 1, not only the last', () => {
    // Last session's fresh-gateway soak (MiB): minute 10 is −6.1%, but minute 6 is +21.4%.
    const v = soakBand([277.1, 290.6, 298.0, 289.8, 291.3, 336.5, 295.8, 260.7, 260.8, 260.2])
    expect(v.lastInside).toBe(true)
    expect(v.allInside).toBe(false)
    expect(v.worst.minute).toBe(6)
    expect(v.worst.deviation).toBeCloseTo(0.2144, 3)
    expect(v.minutes.filter((m) => !m.inside).map((m) => m.minute)).toEqual([6])
  })

  it('counts a drop below the band as outside too, and the band edge as inside', () => {
    expect(soakBand([100, 85, 115]).allInside).toBe(true)
    const v = soakBand([100, 84.9, 100])
    expect(v.allInside).toBe(false)
    expect(v.minutes[1]).toMatchObject({ minute: 2, inside: false })
  })

  it('honours another band', () => {
    expect(soakBand([100, 109], 0.1).allInside).toBe(true)
    expect(soakBand([100, 111], 0.1).allInside).toBe(false)
  })
})
