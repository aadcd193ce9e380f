/**
 * Benchmark: generation throughput through the model server's HTTP API versus the same generation in-process.
 *
 *   npx tsx scripts/bench/modelserverThroughput.ts [--tokens 400] [--runs 5] [--threads 1]
 *
 * One engine (llama.cpp threads set explicitly) serves both paths. In-process: `EngineModel.complete` on the
 * model the server has loaded. HTTP: `POST /api/generate` (`stream: false`, then `stream: true`) on a server in
 * this process. Same prompt, seed and `num_predict`; tokens per second = generated tokens / wall-clock seconds,
 * median of the runs. Prints the figures and the HTTP/in-process ratio. On a shared machine wall-clock figures
 * are noisy, so each path also reports tokens per CPU-second of this process (llama.cpp threads included),
 * which other processes' load does not change.
 */
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createModelServer } from '../../src/modelserver/app.js'
import { loadModelServerConfig } from '../../src/modelserver/config.js'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'

const { values } = parseArgs({ options: { tokens: { type: 'string', default: '400' }, runs: { type: 'string', default: '5' }, threads: { type: 'string', default: '1' } } })
const tokens = Number(values.tokens)
const runs = Number(values.runs)
const threads = Number(values.threads)
const options = { seed: 7, temperature: 0.8, num_predict: tokens }
const prompt = 'Once upon a time'

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

type Sample = { wall: number; cpu: number }
/** Runs `fn` (which returns the number of generated tokens) and returns tokens per wall second and per CPU second. */
async function measure(fn: () => Promise<number>): Promise<Sample> {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const n = await fn()
  const wall = (performance.now() - t0) / 1000
  const c = process.cpuUsage(cpu0)
  return { wall: n / wall, cpu: n / ((c.user + c.system) / 1e6) }
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-modelserver-'))
const engine = await createEngine({ threads })
const server = await createModelServer({ config: { ...loadModelServerConfig({}), modelsDir: dir, threads }, engine, processMetrics: false })
const http = server.app.listen(0, '127.0.0.1')
await new Promise((r) => http.once('listening', r))
const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`

try {
  const post = (body: unknown) => fetch(`${url}/api/generate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  // Load (and warm) the model through the server, then take the very same EngineModel for the in-process path.
  await (await post({ model: 'svc-tiny-chat', prompt, stream: false, options: { ...options, num_predict: 8 }, keep_alive: -1 })).json()
  const record = await server.ctx.findModel('svc-tiny-chat')
  const model = server.ctx.residency.get(record)!.model

  const samples: Record<string, Sample[]> = { inProcess: [], inProcessStream: [], http: [], httpStream: [] }
  let produced = 0
  // One warm-up round first (JIT, allocator, page cache), discarded.
  for (let i = -1; i < runs; i++) {
    if (i === 0) for (const k of Object.keys(samples)) samples[k] = []
    samples.inProcess!.push(
      await measure(async () => {
        const r = await model.complete({ prompt, options })
        produced = r.evalCount
        return r.evalCount
      }),
    )
    samples.inProcessStream!.push(await measure(async () => (await model.complete({ prompt, options, onToken: () => {} })).evalCount))
    samples.http!.push(
      await measure(async () => ((await (await post({ model: 'svc-tiny-chat', prompt, stream: false, options })).json()) as { eval_count: number }).eval_count),
    )
    samples.httpStream!.push(
      await measure(async () => {
        const text = await (await post({ model: 'svc-tiny-chat', prompt, options })).text()
        return (JSON.parse(text.trimEnd().split('\n').at(-1)!) as { eval_count: number }).eval_count
      }),
    )
  }
  const fig = (k: string) => ({ wall: median(samples[k]!.map((x) => x.wall)), cpu: median(samples[k]!.map((x) => x.cpu)) })
  const base = fig('inProcess')
  const baseStream = fig('inProcessStream')
  const line = (label: string, f: { wall: number; cpu: number }, ref: { wall: number; cpu: number }) =>
    console.log(
      `${label.padEnd(26)} ${f.wall.toFixed(0).padStart(6)} tokens/s wall (${((f.wall / ref.wall) * 100).toFixed(1)}%)  ` +
        `${f.cpu.toFixed(0).padStart(6)} tokens/CPU-s (${((f.cpu / ref.cpu) * 100).toFixed(1)}%)`,
    )
  console.log(`tokens per run: ${produced} (num_predict ${tokens}), runs: ${runs}, llama threads: ${threads}`)
  line('in-process', base, base)
  line('HTTP stream:false', fig('http'), base)
  line('in-process with onToken', baseStream, baseStream)
  line('HTTP stream:true', fig('httpStream'), baseStream)
} finally {
  http.closeAllConnections()
  http.close()
  await server.close()
  await engine.dispose()
  await rm(dir, { recursive: true, force: true })
}
