import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { closeAllBars, createBars, formatBarLine } from './progress.js'

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

/** A terminal stream of 80 columns that keeps what is written. */
function fakeTerminal() {
  const written: string[] = []
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 80, rows: 24, cursorTo: () => true, moveCursor: () => true, clearLine: () => true, clearScreenDown: () => true })
  stream.on('data', (c: Buffer) => written.push(c.toString()))
  return { stream: stream as unknown as NodeJS.WriteStream, written }
}
const settleMs = () => new Promise((r) => setTimeout(r, 250)) // longer than a redraw interval

describe('createBars: no bar outlives its command', () => {
  it('after close, a late progress report draws nothing (a live bar redraws on a timer, which keeps a process alive)', async () => {
    const { stream, written } = fakeTerminal()
    const bars = createBars(true, stream)
    bars.update('quote', 'quote (upload)', 10, 100)
    await settleMs()
    expect(written.join('')).toContain('quote (upload)')
    bars.close()
    await settleMs()
    const drawn = written.length
    bars.update('quote', 'quote (upload)', 80, 100) // a file still being read after its upload failed
    await settleMs()
    expect(written.length).toBe(drawn)
    expect(bars.print('a message')).toBe(false) // the caller prints it itself
  })

  it('done leaves the set open for the next step; closeAllBars closes every set still open', async () => {
    const { stream, written } = fakeTerminal()
    const first = createBars(true, stream)
    const second = createBars(true, stream)
    first.update('quote', 'quote (upload)', 100, 100)
    first.done()
    first.update('upload', 'upload (paid)', 10, 100)
    second.update('hash', 'hashing', 1, 2)
    await settleMs()
    expect(written.join('')).toContain('upload (paid)')
    closeAllBars()
    await settleMs()
    const drawn = written.length
    first.update('upload', 'upload (paid)', 90, 100)
    second.update('hash', 'hashing', 2, 2)
    await settleMs()
    expect(written.length).toBe(drawn)
  })
  it('while bars are drawn, SIGINT and SIGTERM first close them (the cursor comes back); no handler is left after', () => {
    const { stream, written } = fakeTerminal()
    const listeners = () => [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]
    const idle = listeners()
    const bars = createBars(true, stream)
    bars.update('quote', 'quote (upload)', 10, 100)
    expect(listeners()).toEqual(idle.map((n) => n + 1))
    bars.done()
    expect(listeners()).toEqual(idle)
    bars.update('upload', 'upload (paid)', 10, 100)
    expect(listeners()).toEqual(idle.map((n) => n + 1))
    bars.close()
    expect(listeners()).toEqual(idle)
    expect(written.join('')).toContain('\u001b[?25h') // the cursor shown again
  })
})
