/**
 * Benchmark: which llama.cpp thread count to use by default (`MODELSERVER_THREADS`).
 *
 *   npx tsx scripts/bench/modelserverThreads.ts [--threads 1,2] [--tokens 256] [--runs 7] [--hogs 1]
 *
 * For each thread count, a model server child (as `npm run modelserver`) generates `svc-tiny-chat` through
 * HTTP (`stream: false`, same seed and options, tokens/s = tokens / wall-clock seconds, median of the runs),
 * first on the machine as it is, then with `--hogs` busy-loop child processes running, i.e. with fewer free
 * cores — as under `npm start`, where the devnet and the gateway share the machine.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { spawnModelServer } from './support/modelserverChild.js'

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '1,2' },
    tokens: { type: 'string', default: '256' },
    runs: { type: 'string', default: '7' },
    hogs: { type: 'string', default: '1' },
  },
})
const threadCounts = values.threads.split(',').map(Number)
const tokens = Number(values.tokens)
const runs = Number(values.runs)
const hogCount = Number(values.hogs)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function measure(url: string): Promise<{ median: number; min: number; tokens: number }> {
  const rates: number[] = []
  let produced = 0
  for (let i = -1; i < runs; i++) {
    const t0 = performance.now()
    const res = await fetch(`${url}/api/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-tiny-chat', prompt: 'Once upon a time', stream: false, keep_alive: -1, options: { seed: 4, temperature: 0.8, num_predict: tokens } }),
    })
    const body = (await res.json()) as { eval_count: number }
    produced = body.eval_count
    if (i >= 0) rates.push(body.eval_count / ((performance.now() - t0) / 1000))
  }
  return { median: median(rates), min: Math.min(...rates), tokens: produced }
}

const startHogs = (n: number): ChildProcess[] =>
  Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))

console.log(`${os.availableParallelism()} cores, load ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}; ${runs} runs of ${tokens} tokens (HTTP, stream:false)`)
for (const threads of threadCounts) {
  const server = await spawnModelServer(threads)
  try {
    const idle = await measure(server.url)
    const hogs = startHogs(hogCount)
    let busy
    try {
      await new Promise((r) => setTimeout(r, 300))
      busy = await measure(server.url)
    } finally {
      for (const h of hogs) h.kill('SIGKILL')
    }
    const f = (m: { median: number; min: number }) => `${m.median.toFixed(0).padStart(5)} tokens/s (worst ${m.min.toFixed(0)})`
    console.log(`threads ${threads}: as is ${f(idle)}   with ${hogCount} busy-loop process(es) ${f(busy)}   [${idle.tokens} tokens]`)
  } finally {
    await server.stop()
  }
}
