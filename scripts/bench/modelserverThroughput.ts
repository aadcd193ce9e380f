/**
 * Benchmark: generation throughput through the model server's HTTP API versus the same generation in-process
 * ("tokens per second through HTTP within 5% of the same generation run in-process").
 *
 *   npx tsx scripts/bench/modelserverThroughput.ts [--tokens 512] [--runs 21] [--threads 1] [--seed auto] [--cpus dedicated|shared]
 *
 * - HTTP: a model server in a child process (its own event loop, like `npm run modelserver`), the stock default
 *   model `svc-tiny-chat`, `POST /api/generate` with `stream: false` and with `stream: true` (NDJSON, read to
 *   the end by this process through node:http, keeping only the tail: a lean client, see the README).
 * - In-process: this process loads the same GGUF on its own engine (same llama.cpp thread count) and calls
 *   `EngineModel.complete` with the same prompt and options, without and with an `onToken` callback.
 * - Same tokens: seed, temperature and `num_predict` are identical, and the seed is chosen (first that works,
 *   unless `--seed`) so the generation runs to `num_predict` instead of stopping early; every run checks that
 *   both paths produced exactly that many tokens.
 * - CPUs (`--cpus`): `dedicated` (the default where it can be done) generates on core 1 on both paths — the
 *   server child is pinned there, and this process moves there for its in-process runs — and reads the HTTP
 *   replies from core 0, as a client on another machine would; `shared` lets the scheduler place everything
 *   on the machine's cores (the README shows what a co-located client costs the stream on 2 cores).
 * - The paths alternate within each round (so machine noise hits them alike); one warm-up round is discarded;
 *   figures are medians and bests (the fastest run, least disturbed on a shared machine). Two rates per path: wall clock seen by the caller (request, parse and transfer
 *   included) and eval rate (`eval_count / eval_duration`, the seed's definition of tokens per second).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { pinningUnavailable, pinToCpu } from './support/cpuAffinity.js'
import { spawnModelServer } from './support/modelserverChild.js'
import { postKeepingTail } from './support/postKeepingTail.js'

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '512' },
    runs: { type: 'string', default: '21' },
    threads: { type: 'string', default: '1' },
    seed: { type: 'string', default: 'auto' },
    cpus: { type: 'string', default: 'dedicated' },
  },
})
const threads = Number(values.threads)
const cores = os.availableParallelism() // before pinning narrows it
if (values.cpus !== 'dedicated' && values.cpus !== 'shared') throw new Error(`--cpus is dedicated or shared, not ${values.cpus}`)
const noPinning = values.cpus === 'dedicated' ? pinningUnavailable() : undefined
if (noPinning) console.log(`${noPinning}: running with --cpus shared`)
const dedicated = values.cpus === 'dedicated' && !noPinning
// One core for generation: more llama.cpp threads than cores collapse (src/modelserver/README.md, "Threads").
if (dedicated && threads > 1) throw new Error('--cpus dedicated generates on one core: use --threads 1, or --cpus shared')
/** Generation runs here on both paths when dedicated; the HTTP client reads from the other core. */
const GENERATION_CPU = 1
const CLIENT_CPU = 0

await bench()

async function bench(): Promise<void> {
  const { createEngine } = await import('../../src/modelserver/engine/createEngine.js')
  const { tinyChatModel } = await import('../../src/modelserver/gguf/tinyModels.js')
  const tokens = Number(values.tokens)
  const runs = Number(values.runs)
  const prompt = 'Once upon a time'
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

  const server = await spawnModelServer(threads)
  if (dedicated) pinToCpu(server.pid, GENERATION_CPU)
  const url = server.url
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-throughput-'))
  const engine = await createEngine({ threads })
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const tiny = tinyChatModel()
    const file = path.join(dir, 'chat.gguf')
    await writeFile(file, tiny.bytes)
    const model = await engine.loadModel({ path: file, name: tiny.name })

    // A seed whose generation runs to num_predict (the random tiny model may emit end-of-generation early).
    let seed = values.seed === 'auto' ? -1 : Number(values.seed)
    for (let s = 1; seed < 0 && s <= 200; s++) {
      const r = await model.complete({ prompt, options: { seed: s, temperature: 0.8, num_predict: tokens } })
      if (r.evalCount === tokens) seed = s
    }
    if (seed < 0) throw new Error(`no seed in 1..200 generates ${tokens} tokens; pass --seed or fewer --tokens`)
    const options = { seed, temperature: 0.8, num_predict: tokens }

    type Result = { evalCount: number; evalDurationNs: number }
    type Sample = { wall: number; eval: number }
    const measure = async (fn: () => Promise<Result>): Promise<Sample> => {
      const t0 = performance.now()
      const r = await fn()
      const seconds = (performance.now() - t0) / 1000
      if (r.evalCount !== tokens) throw new Error(`a run produced ${r.evalCount} tokens, not ${tokens}`)
      return { wall: r.evalCount / seconds, eval: r.evalCount / (r.evalDurationNs / 1e9) }
    }
    // The client is node:http keeping only the tail of the body (support/postKeepingTail.ts).
    const post = async (stream: boolean) => {
      const text = (await postKeepingTail(`${url}/api/generate`, { model: 'svc-tiny-chat', prompt, stream, options, keep_alive: -1 }, agent)).trimEnd()
      return JSON.parse(text.slice(text.lastIndexOf('\n') + 1)) as Final
    }
    type Final = { eval_count: number; eval_duration: number }
    const fromFinal = (f: Final): Result => ({ evalCount: f.eval_count, evalDurationNs: f.eval_duration })
    const paths: Record<string, () => Promise<Result>> = {
      'in-process': () => model.complete({ prompt, options }),
      'HTTP stream:false': async () => fromFinal(await post(false)),
      'in-process + onToken': () => model.complete({ prompt, options, onToken: () => {} }),
      'HTTP stream:true': async () => fromFinal(await post(true)),
    }
    // Dedicated CPUs: this process (its engine's threads included) moves before each path, outside the timing.
    const cpuOf = (name: string) => (name.startsWith('HTTP') ? CLIENT_CPU : GENERATION_CPU)
    const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(paths).map((k) => [k, []]))
    for (let round = -1; round < runs; round++) {
      for (const [name, fn] of Object.entries(paths)) {
        if (dedicated) pinToCpu(process.pid, cpuOf(name))
        const s = await measure(fn)
        if (round >= 0) samples[name]!.push(s)
      }
    }

    const best = (xs: number[]) => Math.max(...xs)
    const fig = (k: string, of: (xs: number[]) => number) => ({ wall: of(samples[k]!.map((x) => x.wall)), eval: of(samples[k]!.map((x) => x.eval)) })
    const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)}%`.padStart(6)
    const row = (label: string, ref: string) => {
      const [f, r, fb, rb] = [fig(label, median), fig(ref, median), fig(label, best), fig(ref, best)]
      console.log(
        `${label.padEnd(22)} median ${f.wall.toFixed(0).padStart(5)} wall (${pct(f.wall, r.wall)}) ${f.eval.toFixed(0).padStart(5)} eval (${pct(f.eval, r.eval)})` +
          `   best ${fb.wall.toFixed(0).padStart(5)} wall (${pct(fb.wall, rb.wall)}) ${fb.eval.toFixed(0).padStart(5)} eval (${pct(fb.eval, rb.eval)})`,
      )
    }
    const load = os.loadavg().map((x) => x.toFixed(2)).join(' ')
    const cpus = dedicated ? `dedicated CPUs (generation on core ${GENERATION_CPU}, HTTP client on core ${CLIENT_CPU})` : 'shared CPUs'
    console.log(`${tokens} tokens per run (seed ${seed}, temperature 0.8), ${runs} runs + 1 warm-up, llama threads ${threads}, ${cores} cores, ${cpus}, load ${load}`)
    row('in-process', 'in-process')
    row('HTTP stream:false', 'in-process')
    row('in-process + onToken', 'in-process + onToken')
    row('HTTP stream:true', 'in-process + onToken')
    console.log('tokens/s; percentages: HTTP relative to the in-process path above it. wall = as seen by the caller,')
    console.log('eval = eval_count / eval_duration. "best" = fastest run of each path (least disturbed on a shared machine).')
  } finally {
    agent.destroy()
    await server.stop()
    await engine.dispose()
    await rm(dir, { recursive: true, force: true })
  }
}
