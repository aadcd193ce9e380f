/**
 * Benchmark: streamed tokens per second through the OpenAI-compatible `/v1/chat/completions` (server-sent events)
 * against `/api/chat` (NDJSON) on the same server (≥ 0.97 of `/api/chat`).
 *
 *   npx tsx scripts/bench/modelserverOpenAI.ts [--tokens 512] [--rounds 25] [--threads 1] [--seed auto] [--cpus dedicated|shared]
 *
 * - One model server in a child process (support/modelserverChild.ts), the default model `svc-tiny-chat`, the
 *   same conversation, seed, temperature and token budget on both routes (`num_predict` / `max_tokens`); the
 *   seed is chosen so the generation runs to the budget, and every run checks it produced exactly that many
 *   tokens (`eval_count` of the last NDJSON line; `usage.completion_tokens` of the SSE usage chunk).
 * - Both routes stream, read to the end by this process through node:http keeping only the tail
 *   (support/postKeepingTail.ts). Rate = tokens / wall-clock seconds as the caller sees them.
 * - The routes alternate within each round (which goes first alternates too); one warm-up round is discarded.
 *   Reported: the median rate of each route with its spread (min–max and interquartile range), the ratio of the
 *   medians, and the median and spread of the per-round ratios.
 * - `--cpus dedicated` (default where possible, support/cpuAffinity.ts): the server on core 1, this client on core 0.
 */
import http from 'node:http'
import os from 'node:os'
import { parseArgs } from 'node:util'
import { pinningUnavailable, pinToCpu } from './support/cpuAffinity.js'
import { spawnModelServer } from './support/modelserverChild.js'
import { postKeepingTail } from './support/postKeepingTail.js'

const { values } = parseArgs({
  options: {
    tokens: { type: 'string', default: '512' },
    rounds: { type: 'string', default: '25' },
    threads: { type: 'string', default: '1' },
    seed: { type: 'string', default: 'auto' },
    cpus: { type: 'string', default: 'dedicated' },
  },
})
const tokens = Number(values.tokens)
const rounds = Number(values.rounds)
const threads = Number(values.threads)
if (rounds < 20) throw new Error('--rounds is at least 20')
if (values.cpus !== 'dedicated' && values.cpus !== 'shared') throw new Error(`--cpus is dedicated or shared, not ${values.cpus}`)
const noPinning = values.cpus === 'dedicated' ? pinningUnavailable() : undefined
if (noPinning) console.log(`${noPinning}: running with --cpus shared`)
const dedicated = values.cpus === 'dedicated' && !noPinning
if (dedicated && threads > 1) throw new Error('--cpus dedicated generates on one core: use --threads 1, or --cpus shared')

const messages = [{ role: 'user', content: 'Once upon a time' }]
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  const i = (s.length - 1) * q
  return s[Math.floor(i)]! + (s[Math.ceil(i)]! - s[Math.floor(i)]!) * (i - Math.floor(i))
}

const server = await spawnModelServer(threads)
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
try {
  if (dedicated) {
    pinToCpu(server.pid, 1)
    pinToCpu(process.pid, 0)
  }
  const url = server.url

  /** Ollama's route: the last NDJSON line carries eval_count. */
  const ollama = async (seed: number, budget: number) => {
    const options = { seed, temperature: 0.8, num_predict: budget }
    const text = (await postKeepingTail(`${url}/api/chat`, { model: 'svc-tiny-chat', messages, stream: true, options, keep_alive: -1 }, agent)).trimEnd()
    return (JSON.parse(text.slice(text.lastIndexOf('\n') + 1)) as { eval_count: number }).eval_count
  }
  /** The OpenAI route: the usage chunk (before `data: [DONE]`) carries completion_tokens. */
  const openai = async (seed: number, budget: number) => {
    const body = { model: 'svc-tiny-chat', messages, stream: true, stream_options: { include_usage: true }, seed, temperature: 0.8, max_tokens: budget }
    const events = (await postKeepingTail(`${url}/v1/chat/completions`, body, agent)).split('\n\n').filter((e) => e.startsWith('data: '))
    if (events.at(-1) !== 'data: [DONE]') throw new Error('the SSE stream did not end with data: [DONE]')
    return (JSON.parse(events.at(-2)!.slice(6)) as { usage: { completion_tokens: number } }).usage.completion_tokens
  }

  let seed = values.seed === 'auto' ? -1 : Number(values.seed)
  for (let s = 1; seed < 0 && s <= 200; s++) if ((await ollama(s, tokens)) === tokens) seed = s
  if (seed < 0) throw new Error(`no seed in 1..200 generates ${tokens} tokens; pass --seed or fewer --tokens`)

  const routes = { '/api/chat': ollama, '/v1/chat/completions': openai }
  const rates: Record<keyof typeof routes, number[]> = { '/api/chat': [], '/v1/chat/completions': [] }
  const ratios: number[] = []
  for (let round = -1; round < rounds; round++) {
    const order = (round % 2 === 0 ? ['/api/chat', '/v1/chat/completions'] : ['/v1/chat/completions', '/api/chat']) as (keyof typeof routes)[]
    const got: Partial<Record<keyof typeof routes, number>> = {}
    for (const route of order) {
      const t0 = performance.now()
      const n = await routes[route](seed, tokens)
      const seconds = (performance.now() - t0) / 1000
      if (n !== tokens) throw new Error(`${route} produced ${n} tokens, not ${tokens}`)
      got[route] = n / seconds
    }
    if (round < 0) continue
    rates['/api/chat'].push(got['/api/chat']!)
    rates['/v1/chat/completions'].push(got['/v1/chat/completions']!)
    ratios.push(got['/v1/chat/completions']! / got['/api/chat']!)
  }

  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ')
  const cpus = dedicated ? 'dedicated CPUs (server on core 1, client on core 0)' : 'shared CPUs'
  console.log(`${tokens} tokens per run (seed ${seed}, temperature 0.8), ${rounds} alternating rounds + 1 warm-up, llama threads ${threads}, ${cpus}, load ${load}`)
  for (const [route, xs] of Object.entries(rates)) {
    console.log(
      `${route.padEnd(22)} median ${quantile(xs, 0.5).toFixed(0).padStart(5)} tokens/s  IQR ${quantile(xs, 0.25).toFixed(0)}–${quantile(xs, 0.75).toFixed(0)}  min–max ${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`,
    )
  }
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`
  console.log(`/v1 ÷ /api: ratio of medians ${pct(quantile(rates['/v1/chat/completions'], 0.5) / quantile(rates['/api/chat'], 0.5))}`)
  console.log(`            per-round ratio median ${pct(quantile(ratios, 0.5))}  IQR ${pct(quantile(ratios, 0.25))}–${pct(quantile(ratios, 0.75))}  min–max ${pct(Math.min(...ratios))}–${pct(Math.max(...ratios))}`)
} finally {
  agent.destroy()
  await server.stop()
}
