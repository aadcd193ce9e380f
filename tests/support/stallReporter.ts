/**
 * A vitest reporter that prints nothing while the run goes: it watches the event loop of vitest's main process,
 * hands the stall log's path to the workers (tests/support/stallWatchSetup.ts) and, at the end of the run, prints
 * every stall of `VITEST_STALL_MS` (5 s) or more, longest first — after the summary, so that a CI log cut to its tail
 * still shows them. The whole list stays in `.tmp/stalls.jsonl`.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { Reporter } from 'vitest/node'
import { formatStall, readStalls, stallThresholdMs, watchStalls } from './stallWatch.js'

export default class StallReporter implements Reporter {
  private readonly log = resolve(process.env.VITEST_STALL_LOG ?? '.tmp/stalls.jsonl')
  private stop?: () => void

  onInit(): void {
    mkdirSync(dirname(this.log), { recursive: true })
    writeFileSync(this.log, '')
    // Read by the forks and the thread when they start (they inherit this process's environment).
    process.env.VITEST_STALL_LOG = this.log
    this.stop = watchStalls({ role: 'main', log: this.log, thresholdMs: stallThresholdMs() })
  }

  // onFinished, not onTestRunEnd: the default reporter prints its summary in onTestRunEnd, and this comes after it.
  onFinished(): void {
    this.stop?.()
    const stalls = readStalls(this.log)
    if (stalls.length === 0) return
    const lines = stalls.slice(0, 15).map((s) => `  ${formatStall(s)}`)
    const more = stalls.length > lines.length ? [`  … ${stalls.length - lines.length} more in ${this.log}`] : []
    process.stdout.write(`\nEvent-loop stalls of ${stallThresholdMs() / 1000} s or more (longest first; CPU time close to the stall: code held the loop; little: the process waited):\n${[...lines, ...more].join('\n')}\n`)
  }
}
