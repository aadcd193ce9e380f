/**
 * CPU pinning for the benchmarks, through util-linux `taskset` (Node has no sched_setaffinity).
 *
 * Why: on a 2-core machine a benchmark client shares the cores with the server it measures. Each NDJSON write
 * wakes the client, and the scheduler may run it on the core where llama.cpp's worker is computing the next
 * token, so the generation pays for the client's reads (src/modelserver/README.md has figures for both layouts).
 * Pinning the server to one core and the client to the other measures the server as a remote client would see it.
 */
import { execFileSync } from 'node:child_process'
import os from 'node:os'

/** Why pinning is not possible here, or undefined when it is (Linux, taskset present, at least 2 cores). */
export function pinningUnavailable(): string | undefined {
  if (process.platform !== 'linux') return `CPU pinning needs Linux (this is ${process.platform})`
  if (os.availableParallelism() < 2) return 'CPU pinning needs at least 2 cores'
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' })
  } catch {
    return 'CPU pinning needs taskset (util-linux)'
  }
  return undefined
}

/** Pins every thread of `pid` to `cpu`; threads the process creates later inherit the mask of their creator. */
export function pinToCpu(pid: number, cpu: number): void {
  execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', String(cpu), String(pid)], { stdio: 'ignore' })
}
