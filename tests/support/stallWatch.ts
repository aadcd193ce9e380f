/**
 * Event-loop stall watch for the test run: every vitest process (its main process, each fork, the browser files'
 * thread) appends a line to one file whenever its event loop was held for longer than a threshold, with what the
 * machine looked like then. Why: a run can fail with `[vitest-worker]: Timeout calling "onTaskUpdate"` — a
 * worker's call to vitest's main process gave up after 60 s, which is what happens when the worker's own loop is
 * held that long (docs/testing.md, "Speed") — and a CI log often keeps only its tail. The
 * reporter (stallReporter.ts) prints the longest stalls at the very end of the run, so the tail says which process
 * stalled, during which file, and whether it was busy (CPU time close to the stall: code holding the loop) or
 * starved (little CPU time: waiting on the disk, on memory, or for a core; the pressure figures tell which).
 */
import { appendFileSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'

// The clocks and the timer as they are before any test fakes them (vi.useFakeTimers replaces the globals, and a faked
// clock jumping ahead would read as a stall of days).
const monotonicNow = performance.now.bind(performance)
const wallNow = Date.now
const realSetInterval = setInterval
const realClearInterval = clearInterval

export type Stall = {
  /** When the stall began (ISO time). */
  at: string
  /** `main`, `fork` or `thread`. */
  role: string
  pid: number
  stalledMs: number
  /** CPU time the whole process used meanwhile (all its threads). */
  cpuMs: number
  /** The test file this process was running, when known. */
  file?: string
  /** The machine's 1-minute load average when the stall ended. */
  load: number
  /** Linux pressure (PSI) `some avg10` for cpu, io and memory when the stall ended, where the kernel has it. */
  pressure?: { cpu?: number; io?: number; memory?: number }
}

/** The threshold of the test run's watch: `VITEST_STALL_MS`, 5 s by default. */
export const stallThresholdMs = (): number => Number(process.env.VITEST_STALL_MS ?? 5000)

export type WatchStallsOptions = {
  role: string
  /** The file that stalls are appended to (JSON lines). */
  log: string
  thresholdMs: number
  /** The test file running now, when the caller knows it. */
  currentFile?: () => string | undefined
  /** How often the loop is sampled. */
  intervalMs?: number
}

/** Starts watching this thread's event loop; returns a function that stops. The timer never keeps the process up. */
export function watchStalls({ role, log, thresholdMs, currentFile, intervalMs = 250 }: WatchStallsOptions): () => void {
  let last = monotonicNow()
  let lastCpu = process.cpuUsage()
  const timer = realSetInterval(() => {
    const now = monotonicNow()
    const cpu = process.cpuUsage()
    const stalledMs = now - last - intervalMs
    if (stalledMs >= thresholdMs) {
      const stall: Stall = {
        at: new Date(wallNow() - stalledMs).toISOString(),
        role,
        pid: process.pid,
        stalledMs: Math.round(stalledMs),
        cpuMs: Math.round((cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000),
        file: safely(() => currentFile?.()),
        load: Math.round(loadavg()[0] * 100) / 100,
        pressure: readPressure(),
      }
      // A diagnostic must never fail a run: a missing folder or a full disk loses the line, nothing else.
      safely(() => appendFileSync(log, `${JSON.stringify(stall)}\n`))
    }
    last = now
    lastCpu = cpu
  }, intervalMs)
  timer.unref()
  return () => realClearInterval(timer)
}

/** The stalls recorded in `log`, longest first; none when it does not exist. */
export function readStalls(log: string): Stall[] {
  const text = safely(() => readFileSync(log, 'utf8')) ?? ''
  const stalls: Stall[] = []
  for (const line of text.split('\n')) {
    const stall = safely(() => (line ? (JSON.parse(line) as Stall) : undefined))
    if (stall) stalls.push(stall)
  }
  return stalls.sort((a, b) => b.stalledMs - a.stalledMs)
}

/** One line a stall: `74.2 s fork 1234 (tests/x.test.ts) from 05:31:02.120Z, CPU 73.9 s, load 5.1, PSI some avg10 cpu 40 io 2 memory 0`. */
export function formatStall(s: Stall): string {
  const p = s.pressure
  const psi = p ? `, PSI some avg10 cpu ${p.cpu ?? '-'} io ${p.io ?? '-'} memory ${p.memory ?? '-'}` : ''
  return `${(s.stalledMs / 1000).toFixed(1)} s ${s.role} ${s.pid}${s.file ? ` (${s.file})` : ''} from ${s.at.slice(11)}, CPU ${(s.cpuMs / 1000).toFixed(1)} s, load ${s.load}${psi}`
}

function readPressure(): Stall['pressure'] {
  const some = (kind: string) => {
    const text = safely(() => readFileSync(`/proc/pressure/${kind}`, 'utf8'))
    const value = text?.match(/^some avg10=([\d.]+)/)?.[1]
    return value === undefined ? undefined : Number(value)
  }
  const pressure = { cpu: some('cpu'), io: some('io'), memory: some('memory') }
  return pressure.cpu === undefined && pressure.io === undefined && pressure.memory === undefined ? undefined : pressure
}

function safely<T>(f: () => T): T | undefined {
  try {
    return f()
  } catch {
    return undefined
  }
}
