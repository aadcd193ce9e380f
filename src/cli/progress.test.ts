import { describe, expect, it } from 'vitest'
import { formatBarLine } from './progress.js'

const payload = { label: 'quote (upload)', done: '130 KB', size: '150 KB' }

describe('formatBarLine', () => {
  it('fits the terminal width it is given, keeping the amounts whole', () => {
    for (const width of [200, 120, 80, 72, 60, 50, 40, 32, 24]) {
      const line = formatBarLine(width, 0.87, payload)
      expect(line.length, `${width}: ${line}`).toBeLessThan(width)
      expect(line, `${width}`).toMatch(/87% 130 KB\/150 KB$/)
    }
  })

  it('the bar gives way first (at most 40 wide), then the label; a narrow terminal gets no bar', () => {
    expect(formatBarLine(200, 1, payload)).toBe(`quote (upload) [${'█'.repeat(40)}] 100% 130 KB/150 KB`)
    const at60 = formatBarLine(60, 0.5, payload)
    expect(at60).toMatch(/^quote \(upload\) \[█+░+\]  50% 130 KB\/150 KB$/)
    expect(at60.length).toBe(59)
    expect(formatBarLine(42, 0.5, payload)).toMatch(/^quote \(up \[█{5}░{5}\]  50% 130 KB\/150 KB$/)
    expect(formatBarLine(24, 0.5, payload)).not.toContain('[')
  })
})
