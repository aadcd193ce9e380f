/**
 * Preloaded into a benchmarked server (`node --import ./scripts/bench/support/loopProbe.mjs …`) by
 * `npm run bench -- pipeline -- --diagnose`: measures the event loop's delay (perf_hooks.monitorEventLoopDelay,
 * sampled every 2 ms), i.e. how long ready work waited because something else held the loop. Each SIGUSR2
 * prints the delays since the previous one as a JSON line `{"loopDelay": {p50, p99, max, mean}}` (ms) on stdout
 * and starts a new interval, so the benchmark can bracket one measured run. The line also carries
 * `process.memoryUsage()` (bytes), so the soak can say which part of RSS moved.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'

const resolutionMs = 2
const histogram = monitorEventLoopDelay({ resolution: resolutionMs })
histogram.enable()
// The histogram holds the whole interval between two samples (the 2 ms period plus the delay): report the delay.
const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - resolutionMs) * 100) / 100)
process.on('SIGUSR2', () => {
  const loopDelay = { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), mean: ms(histogram.mean) }
  histogram.reset()
  process.stdout.write(`${JSON.stringify({ loopDelay, memory: process.memoryUsage() })}\n`)
})
