import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { formatStall, readStalls, watchStalls } from './stallWatch.js'

const dirs: string[] = []
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })))
const logFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'stalls-'))
  dirs.push(dir)
  return join(dir, 'stalls.jsonl')
}
const realSetTimeout = setTimeout
const tick = (ms: number) => new Promise((r) => realSetTimeout(r, ms))

describe('watchStalls', () => {
  it('records a loop held by code, with the CPU time it burnt and the file being run', async () => {
    const log = logFile()
    const stop = watchStalls({ role: 'fork', log, thresholdMs: 400, intervalMs: 50, currentFile: () => 'tests/x.test.ts' })
    await tick(120)
    // The event loop is held by code for 600 ms of this process's CPU time (on a loaded machine that takes longer).
    const from = process.cpuUsage()
    const used = () => process.cpuUsage(from)
    while ((used().user + used().system) / 1000 < 600);
    await tick(120)
    stop()
    const [stall, ...rest] = readStalls(log)
    expect(rest).toEqual([])
    expect(stall).toMatchObject({ role: 'fork', pid: process.pid, file: 'tests/x.test.ts' })
    expect(stall.stalledMs).toBeGreaterThanOrEqual(550)
    expect(stall.cpuMs).toBeGreaterThanOrEqual(550)
    expect(formatStall(stall)).toMatch(/^\d+\.\d s fork \d+ \(tests\/x\.test\.ts\) from \d\d:\d\d:\d\d\.\d{3}Z, CPU \d+\.\d s, load /)
  })

  it('records a loop held while the process waits, with little CPU time; short pauses are not stalls', async () => {
    const log = logFile()
    const stop = watchStalls({ role: 'main', log, thresholdMs: 400, intervalMs: 50 })
    await tick(120)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100) // under the threshold
    await tick(120)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 700) // blocked, as in a write to a full pipe
    await tick(120)
    stop()
    const stalls = readStalls(log)
    expect(stalls).toHaveLength(1)
    expect(stalls[0].stalledMs).toBeGreaterThanOrEqual(600)
    expect(stalls[0].cpuMs).toBeLessThan(300)
    expect(stalls[0].file).toBeUndefined()
  })

  it('is not fooled by a test that fakes the clocks and jumps them ahead', async () => {
    const log = logFile()
    const stop = watchStalls({ role: 'fork', log, thresholdMs: 400, intervalMs: 50 })
    vi.useFakeTimers()
    try {
      vi.setSystemTime(new Date('2030-01-01T00:00:00Z'))
      vi.advanceTimersByTime(3 * 86_400_000)
      await tick(200) // the watch's own timer fires meanwhile, the clocks still faked
    } finally {
      vi.useRealTimers()
    }
    stop()
    expect(readStalls(log)).toEqual([])
  })

  it('reads nothing from a missing log', () => {
    expect(readStalls(join(tmpdir(), 'no-such-dir-stalls', 'x.jsonl'))).toEqual([])
  })
})
