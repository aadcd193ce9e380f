/**
 * Benchmark: what the gateway adds to LLM calls — the median time to first token it adds (≤ 1 ms, and within 2×
 * what a bare node:http proxy adds, measured in the same run) and its streamed tokens/s (≥ 0.97 of direct), side
 * by side in one run, medians of at least 20 alternating rounds, with their spread.
 *
 *   npm run bench -- llm      (or: npx tsx scripts/bench/llmGateway.ts [--ttft-rounds 201] [--rounds 31] [--tokens 512] [--modelserver <url>])
 *   npm run bench -- llm -- --profile    (the gateway under `node --cpu-prof`; its self time summarised, from the
 *                                         first measured round on — profiling slows it: not a run for the table)
 *   npm run bench -- llm -- --trace      (the gateway's and the bare proxy's own time per `/v1/messages` call, read off
 *                                         node:http's diagnostics channels: before the model server is asked,
 *                                         from its first bytes to the client's, and from that write to the socket;
 *                                         the model server's own time by path — `support/traceProxyTimes.mjs`;
 *                                         tracing costs a little: a run for the breakdown, not for the table)
 *   npm run bench -- llm -- --pin        (the gateway and the bare proxy on CPU 0, this client and the model server
 *                                         on CPU 1: the gateway tier on a core of its own, as when it is deployed
 *                                         apart from the model server; default: the scheduler places everything)
 *
 * - Model server: a child process with the default tiny models (`scripts/bench/support/modelserverChild.ts`).
 * - Gateway: a second child process, the production entry (`src/main.ts`) with the Node flags of `npm run serve`
 *   (scripts/gatewayNodeFlags.ts) on a fresh SQLite data dir, pointed at that model server; quota and rate limit
 *   out of the way. This process is only the client.
 * - Pairs, each measured directly against the model server and through the gateway:
 *   NDJSON  `POST /api/generate` vs `POST /llm/completion` (`stream: true`; the gateway re-shapes every chunk),
 *   SSE     `POST /v1/chat/completions` vs `POST /llm/v1/chat/completions` (passed through byte for byte),
 *           when the model server has its OpenAI-compatible API;
 *   SSE     `POST /v1/messages` vs `POST /llm/v1/messages` (Anthropic's stream, the key in `x-api-key`).
 * - TTFT: request sent → first body bytes received, for a short completion (8 tokens). Added = the median of the
 *   per-round differences gateway − direct; spread = their 25th–75th percentiles, and their 90th. The last lines
 *   are the figures held to: per stream, the gateway's added time beside the bare proxy's (within 2×), and the
 *   first token of a streamed `/v1/messages` call, median and p90 added, with the load.
 * - The floor of one more process on the path: the direct call through a bare node:http reverse proxy
 *   (`support/bareProxy.mjs`: keep-alive, bodies piped, nothing else), measured in the same rounds. "Beyond the
 *   hop" = the median of per-round differences gateway − bare proxy: what the gateway's own work adds.
 * - Streamed tokens/s: a long generation (`--tokens`, a seed that runs to the end), eval_count / wall time to
 *   the last byte. Ratio = median of the per-round ratios gateway / direct, with their 25th–75th percentiles.
 * - Rounds: `--ttft-rounds` (default 201) of short calls for TTFT, `--rounds` (default 31) of long streams for
 *   tokens/s. A TTFT round costs a few ms: its per-round differences spread over ~1 ms on a shared 2-core machine,
 *   and the median of 31 of them moved by ±0.2 ms from run to run on the same code (2026-11-27) — more than the
 *   changes it was to show; 201 rounds cost ~10 s more.
 * - Each round runs the direct, gateway (and, for TTFT, bare-proxy) calls back to back, rotating which goes first, so drift
 *   and noise on the shared machine hit both alike. Before the rounds, `--warmup` short calls on every path (default
 *   100 each: JIT-compiled code and warm connections, as in a process that has been serving), then one warm-up
 *   round; neither is counted. A cold process is slower on every path, the gateway's most (it runs the most code).
 *   The TTFT rounds all run before the tokens/s rounds (see the comment there).
 * - The client is node:http keeping only the first and last bytes (a lean client; fetch costs more CPU).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import http from 'node:http'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { readdirSync, readFileSync } from 'node:fs'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { spawnModelServer } from './support/modelserverChild.js'
import { gatewayNodeFlags } from '../gatewayNodeFlags.js'
import { pinningUnavailable, pinToCpu } from './support/cpuAffinity.js'
import { startBareProxy, traceFlags } from './support/startBareProxy.js'
import { summarise } from './support/summariseCpuProfile.js'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '31' },
    'ttft-rounds': { type: 'string', default: '201' },
    warmup: { type: 'string', default: '100' },
    tokens: { type: 'string', default: '512' },
    threads: { type: 'string', default: '1' },
    /** A model server already running (instead of the child this benchmark starts). */
    modelserver: { type: 'string' },
    profile: { type: 'boolean', default: false },
    pin: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
  },
})
const rounds = Number(values.rounds)
const ttftRounds = Number(values['ttft-rounds'])
const tokens = Number(values.tokens)
const root = fileURLToPath(new URL('../../', import.meta.url))

type Reply = { status: number; ttftMs: number; totalMs: number; tail: string }

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })

/** POSTs JSON and times the first body bytes and the end; keeps only the tail of the body. */
function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    let first = 0
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let tail = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => {
        if (first === 0) first = performance.now()
        tail = (tail + d).slice(-4096)
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ttftMs: first - started, totalMs: performance.now() - started, tail }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

function lastJsonLine(tail: string): Record<string, any> {
  const lines = tail.trim().split('\n').filter((l) => l.trim() !== '')
  return JSON.parse(lines.at(-1)!) as Record<string, any>
}

/** The usage of an SSE chat stream (`stream_options.include_usage`): the last `data:` object with `usage`. */
function sseUsage(tail: string): { completion_tokens: number } | undefined {
  const events = tail.split('\n').filter((l) => l.startsWith('data: {'))
  for (const event of events.reverse()) {
    const usage = (JSON.parse(event.slice(6)) as { usage?: { completion_tokens: number } | null }).usage
    if (usage) return usage
  }
  return undefined
}

/** `output_tokens` of the last `message_delta` of an Anthropic Messages stream's tail. */
function messagesUsage(tail: string): number | undefined {
  const events = tail.split('\n').filter((l) => l.startsWith('data: {"type":"message_delta"'))
  const last = events.at(-1)
  return last ? (JSON.parse(last.slice(6)) as { usage: { output_tokens: number } }).usage.output_tokens : undefined
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  await new Promise((r) => server.once('listening', r))
  const port = (server.address() as { port: number }).port
  await new Promise((r) => server.close(r))
  return port
}

async function startGateway(modelServerUrl: string, dataDir: string, profileDir: string | undefined, traceFile: string | undefined) {
  const port = await freePort()
  // node with tsx's loader (no tsx CLI process in between), optionally under the CPU profiler.
  const flags = [...gatewayNodeFlags, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), ...traceFlags(traceFile)]
  const child = spawn(process.execPath, ['--import', 'tsx', ...flags, path.join(root, 'src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      SERVICE_PROFILE: 'devnet',
      SERVICE_PORT: String(port),
      SERVICE_HOST: '127.0.0.1',
      SERVICE_DATA_DIR: dataDir,
      SERVICE_LLM__MODELSERVER__BASE_URL: modelServerUrl,
      SERVICE_QUOTA__COST_CALLS_PER_DAY: '1000000000',
      SERVICE_RATE_LIMIT__MAX: '1000000000',
      LOG_LEVEL: 'warn',
      ...(traceFile ? { TRACE_FILE: traceFile } : {}),
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise((r) => child.once('exit', r))
  let gone = false
  void exited.then(() => (gone = true))
  // Up to 3 minutes: on a loaded 2-core machine tsx alone can take most of a minute.
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) break
    } catch {
      if (gone || i > 1800) {
        child.kill('SIGTERM')
        throw new Error(gone ? 'the gateway exited during start' : 'the gateway did not start within 3 minutes')
      }
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM')
      await exited
    },
  }
}

type TracedCall = { arrival: number; sent?: number; upstream?: number; written?: number; wire?: number; stages?: [string, number][] }

/** `--trace`: per process, the medians (p25–p75) of its own time before and after the model server, in the window. */
function traceSummary(file: string, from: number, to: number): string[] {
  const calls = (JSON.parse(readFileSync(file, 'utf8')) as TracedCall[]).filter(
    (c): c is Required<TracedCall> => c.arrival >= from && c.arrival <= to && c.sent !== undefined && c.upstream !== undefined && c.written !== undefined,
  )
  const spread = (xs: number[]) => `${median(xs).toFixed(2)} (${quantile(xs, 0.25).toFixed(2)}–${quantile(xs, 0.75).toFixed(2)})`
  return [
    spread(calls.map((c) => c.sent - c.arrival)),
    spread(calls.map((c) => c.upstream - c.sent)),
    spread(calls.map((c) => c.written - c.upstream)),
    spread(calls.filter((c) => c.wire !== undefined).map((c) => c.wire! - c.written)),
    String(calls.length),
  ]
}

/**
 * `--trace`: the gateway's own time before the model server, stage by stage — median (p25–p75) from each named
 * stage's start (its `pay2store:stage:start`) to the next one's, the last up to its request to the model server
 * written — in list order. The stages are timed as the process runs them once per call, with the other processes
 * between calls: a stage's time here is its cold cost (caches and branch predictors taken by the model server and
 * the client meanwhile), several times what the same code costs in a hot loop.
 */
function stageTimes(file: string, from: number, to: number): string[] {
  const calls = (JSON.parse(readFileSync(file, 'utf8')) as TracedCall[]).filter((c) => c.arrival >= from && c.arrival <= to && c.sent !== undefined && c.stages)
  const spans = new Map<string, { at: number[]; took: number[] }>()
  const add = (label: string, at: number, took: number) => {
    const entry = spans.get(label) ?? spans.set(label, { at: [], took: [] }).get(label)!
    entry.at.push(at)
    entry.took.push(took)
  }
  for (const call of calls) {
    const before = call.stages!.filter(([, t]) => t <= call.sent!)
    add('(arrival → the first stage)', 0, (before[0]?.[1] ?? call.sent!) - call.arrival)
    before.forEach(([stage, t], i) => add(i === before.length - 1 ? `${stage} (until its model-server request is written)` : stage, t - call.arrival, (before[i + 1]?.[1] ?? call.sent!) - t))
  }
  const spread = (xs: number[]) => `${median(xs).toFixed(3)} (${quantile(xs, 0.25).toFixed(3)}–${quantile(xs, 0.75).toFixed(3)})`
  return [...spans]
    .filter(([, { took }]) => took.length >= calls.length / 2)
    .sort(([, a], [, b]) => median(a.at) - median(b.at))
    .map(([label, { took }]) => `| ${label} | ${spread(took)} |`)
}

/**
 * `--trace`: the model server's own time per path (its arrival → its first write), its `/v1/messages` calls of the
 * window matched in order with the paths the benchmark sent them through (one call at a time).
 */
function modelServerTimes(file: string, from: number, to: number, paths: readonly string[]): string {
  const calls = (JSON.parse(readFileSync(file, 'utf8')) as TracedCall[]).filter((c) => c.arrival >= from && c.arrival <= to && c.written !== undefined)
  if (calls.length !== paths.length) return `(${calls.length} model-server calls for ${paths.length} sent: not matched)`
  const byPath = new Map<string, number[]>()
  calls.forEach((c, i) => {
    const times = byPath.get(paths[i]!) ?? byPath.set(paths[i]!, []).get(paths[i]!)!
    times.push(c.written! - c.arrival)
  })
  return [...byPath].map(([which, xs]) => `${which} ${median(xs).toFixed(2)} (${quantile(xs, 0.25).toFixed(2)}–${quantile(xs, 0.75).toFixed(2)})`).join(', ')
}

async function login(url: string): Promise<string> {
  const account = privateKeyToAccount(generatePrivateKey())
  const headers = { 'content-type': 'application/json' }
  const { challenge } = (await (await fetch(`${url}/users/challenge`, { method: 'POST', headers, body: JSON.stringify({ wallet: account.address }) })).json()) as { challenge: string }
  const signature = await account.signMessage({ message: challenge })
  const r = await fetch(`${url}/users/register-with-signature`, { method: 'POST', headers, body: JSON.stringify({ wallet: account.address, challenge, signature }) })
  return ((await r.json()) as { session_token: string }).session_token
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  const i = (s.length - 1) * q
  const lo = Math.floor(i)
  return s[lo]! + (s[Math.ceil(i)]! - s[lo]!) * (i - lo)
}
const median = (xs: number[]) => quantile(xs, 0.5)

await bench()

async function bench(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-llm-'))
  const { server, gateway, proxy, traceFiles, profileDir } = await startProcesses(dataDir)
  try {
    const token = await login(gateway.url)
    const prompt = 'Once upon a time'
    const seed = await seedOfFullLength(server.url, prompt)
    const short = { seed, temperature: 0.8, num_predict: 8 }
    const long = { seed, temperature: 0.8, num_predict: tokens }
    const pairs = await streamPairs({ server: server.url, gateway: gateway.url, proxy: proxy.url, token, prompt, seed })
    for (let i = 0; i < Number(values.warmup); i++)
      for (const pair of pairs(short, 8)) for (const which of ['direct', 'gateway', 'proxy'] as const) await pair[which]()
    const measured = await measureFirstTokens(pairs(short, 8))
    const rate = await measureTokenRates(pairs(long, tokens))
    const messages = printFigures(measured, rate, seed)
    if (traceFiles && messages) {
      // The processes write their times as they exit.
      await gateway.stop()
      await proxy.stop()
      await server.stop()
      printTrace(traceFiles, measured)
    }
    if (profileDir) {
      await gateway.stop()
      printProfile(profileDir, measured.measuredFromUs)
    }
  } finally {
    agent.destroy()
    await proxy.stop()
    await gateway.stop()
    await server.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

type TraceFiles = { gateway: string; proxy: string; modelServer: string }

/** The model server (unless `--modelserver`), the gateway and the bare proxy, pinned to CPUs with `--pin`. */
async function startProcesses(dataDir: string) {
  const traceFiles = values.trace
    ? { gateway: path.join(dataDir, 'trace-gateway.json'), proxy: path.join(dataDir, 'trace-proxy.json'), modelServer: path.join(dataDir, 'trace-modelserver.json') }
    : undefined
  const server = values.modelserver
    ? { url: values.modelserver.replace(/\/+$/, ''), stop: async () => {} }
    : await spawnModelServer(Number(values.threads), traceFiles ? { nodeFlags: traceFlags(traceFiles.modelServer), env: { TRACE_FILE: traceFiles.modelServer } } : {})
  const profileDir = values.profile ? path.join(dataDir, 'profiles') : undefined
  const gateway = await startGateway(server.url, dataDir, profileDir, traceFiles?.gateway).catch(async (error: unknown) => {
    await server.stop()
    throw error
  })
  const proxy = await startBareProxy(server.url, traceFiles?.proxy)
  if (values.pin) {
    const why = pinningUnavailable()
    if (why) throw new Error(`--pin: ${why}`)
    if (!('pid' in server)) throw new Error('--pin needs the model server this benchmark starts (not --modelserver)')
    for (const pid of [server.pid, process.pid]) pinToCpu(pid, 1)
    for (const pid of [gateway.pid, proxy.pid]) pinToCpu(pid, 0)
  }
  return { server, gateway, proxy, traceFiles: traceFiles as TraceFiles | undefined, profileDir }
}

/** A seed whose generation runs to `tokens` (the random tiny model may stop early). */
async function seedOfFullLength(modelServer: string, prompt: string): Promise<number> {
  let seed = -1
  for (let s = 1; s <= 200 && seed < 0; s++) {
    const r = await post(`${modelServer}/api/generate`, { model: 'svc-tiny-chat:latest', prompt, stream: false, options: { seed: s, temperature: 0.8, num_predict: tokens } })
    if (lastJsonLine(r.tail).eval_count === tokens) seed = s
  }
  if (seed < 0) throw new Error(`no seed in 1..200 generates ${tokens} tokens; use fewer --tokens`)
  return seed
}

type Pair = { name: string; direct: () => Promise<Reply>; gateway: () => Promise<Reply>; proxy: () => Promise<Reply>; tokensOf: (r: Reply) => number }

/** The streams measured, each called directly, through the bare proxy and through the gateway. */
async function streamPairs({ server: modelServer, gateway: gatewayUrl, proxy: proxyUrl, token, prompt, seed }: { server: string; gateway: string; proxy: string; token: string; prompt: string; seed: number }): Promise<(options: object, maxTokens: number) => Pair[]> {
  const server = { url: modelServer }
  const gateway = { url: gatewayUrl }
  const proxy = { url: proxyUrl }
  const auth = { 'x-session-token': token }
  const hasOpenAi = (await fetch(`${server.url}/v1/models`)).status === 200
  // A model server without the Messages API answers 404 to /v1/messages (with no body worth sending: a bad request is 400).
  const hasMessages = (await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status === 400
  if (!hasOpenAi) console.log('(the model server has no /v1: the SSE pair is skipped)')
  if (!hasMessages) console.log('(the model server has no /v1/messages: that pair is skipped)')
  const ndjsonTokens = (r: Reply) => Number(lastJsonLine(r.tail).eval_count)
  const pairs = (options: object, maxTokens: number): Pair[] => [
    {
      name: 'NDJSON /api/generate vs /llm/completion',
      direct: () => post(`${server.url}/api/generate`, { model: 'svc-tiny-chat:latest', prompt, stream: true, options }),
      proxy: () => post(`${proxy.url}/api/generate`, { model: 'svc-tiny-chat:latest', prompt, stream: true, options }),
      gateway: () => post(`${gateway.url}/llm/completion`, { prompt, stream: true, options }, auth),
      tokensOf: ndjsonTokens,
    },
    ...(hasOpenAi
      ? [
          {
            name: 'SSE /v1/chat/completions vs /llm/v1/…',
            direct: () => post(`${server.url}/v1/chat/completions`, openAiBody(maxTokens)),
            proxy: () => post(`${proxy.url}/v1/chat/completions`, openAiBody(maxTokens)),
            gateway: () => post(`${gateway.url}/llm/v1/chat/completions`, openAiBody(maxTokens), { authorization: `Bearer ${token}` }),
            tokensOf: (r: Reply) => sseUsage(r.tail)?.completion_tokens ?? Number.NaN,
          },
        ]
      : []),
    ...(hasMessages
      ? [
          {
            // The Anthropic Messages stream, the gateway reached with the SDK's header (`x-api-key`).
            name: 'SSE /v1/messages vs /llm/v1/messages',
            direct: () => post(`${server.url}/v1/messages`, messagesBody(maxTokens)),
            proxy: () => post(`${proxy.url}/v1/messages`, messagesBody(maxTokens)),
            gateway: () => post(`${gateway.url}/llm/v1/messages`, messagesBody(maxTokens), { 'x-api-key': token }),
            tokensOf: (r: Reply) => messagesUsage(r.tail) ?? Number.NaN,
          },
        ]
      : []),
  ]
  const messagesBody = (maxTokens: number) => ({
    model: 'svc-tiny-chat:latest',
    messages: [{ role: 'user', content: prompt }],
    stream: true,
    seed,
    temperature: 0.8,
    max_tokens: maxTokens,
  })
  const openAiBody = (maxTokens: number) => ({
    model: 'svc-tiny-chat:latest',
    messages: [{ role: 'user', content: prompt }],
    stream: true,
    stream_options: { include_usage: true },
    seed,
    temperature: 0.8,
    max_tokens: maxTokens,
  })

  return pairs
}

/** Calls one path of a pair; anything but a 200 ends the benchmark. */
async function run(pair: Pair, which: 'direct' | 'gateway' | 'proxy'): Promise<Reply> {
  const r = await pair[which]()
  if (r.status !== 200) throw new Error(`${pair.name} ${which}: status ${r.status}: ${r.tail.slice(0, 200)}`)
  return r
}

type FirstTokens = Awaited<ReturnType<typeof measureFirstTokens>>

/**
 * The TTFT rounds: every order of the three calls in turn. All TTFT rounds first, then all tokens/s rounds.
 * Mixed in one round, a short call right after a long generation met the model server (and the gateway) still
 * finishing that generation's work: whichever pair came first in the round measured ~0.3 ms more added time, on
 * every path, than the second.
 */
async function measureFirstTokens(shortPairs: Pair[]) {
  let measuredFromUs = 0
  /** `--trace`: the measured TTFT rounds, in epoch ms (the preload's clock). */
  const traceWindow = { from: 0, to: 0 }
  /** `--trace`: the path of each `/v1/messages` call of the measured TTFT rounds, in order. */
  const messagesPaths: string[] = []
  /** The 1-minute load average when the measured rounds began (printed beside the one at the end). */
  let loadAtStart = 0
  const ttft = new Map<string, { direct: number[]; gateway: number[]; added: number[]; hop: number[]; beyond: number[] }>()
  const orders = [
    ['direct', 'gateway', 'proxy'],
    ['gateway', 'proxy', 'direct'],
    ['proxy', 'direct', 'gateway'],
    ['gateway', 'direct', 'proxy'],
    ['direct', 'proxy', 'gateway'],
    ['proxy', 'gateway', 'direct'],
  ] as const
  for (let round = -1; round < ttftRounds; round++) {
    if (round === 0) {
      measuredFromUs = Number(process.hrtime.bigint() / 1000n)
      traceWindow.from = performance.timeOrigin + performance.now()
      loadAtStart = os.loadavg()[0]!
    }
    for (const pair of shortPairs) {
      const got = new Map<string, Reply>()
      for (const which of orders[(round + orders.length) % orders.length]!) {
        if (round >= 0 && pair.name.startsWith('SSE /v1/messages')) messagesPaths.push(which)
        got.set(which, await run(pair, which))
      }
      if (round < 0) continue
      const [d, g, p] = [got.get('direct')!, got.get('gateway')!, got.get('proxy')!]
      const t = ttft.get(pair.name) ?? { direct: [], gateway: [], added: [], hop: [], beyond: [] }
      t.direct.push(d.ttftMs)
      t.gateway.push(g.ttftMs)
      t.added.push(g.ttftMs - d.ttftMs)
      t.hop.push(p.ttftMs - d.ttftMs)
      t.beyond.push(g.ttftMs - p.ttftMs)
      ttft.set(pair.name, t)
    }
  }
  traceWindow.to = performance.timeOrigin + performance.now()
  return { ttft, traceWindow, messagesPaths, loadAtStart, measuredFromUs }
}

/** The tokens/s rounds: direct and gateway alternate (ABBA). */
async function measureTokenRates(longPairs: Pair[]): Promise<Map<string, { direct: number[]; gateway: number[]; ratio: number[] }>> {
  const rate = new Map<string, { direct: number[]; gateway: number[]; ratio: number[] }>()
  for (let round = -1; round < rounds; round++) {
    const gatewayFirst = round % 2 === 1
    for (const pair of longPairs) {
      const [a, b] = gatewayFirst ? [await run(pair, 'gateway'), await run(pair, 'direct')] : [await run(pair, 'direct'), await run(pair, 'gateway')]
      const [d, g] = gatewayFirst ? [b, a] : [a, b]
      if (round < 0) continue
      const [dt, gt] = [pair.tokensOf(d), pair.tokensOf(g)]
      if (dt !== tokens || gt !== tokens) throw new Error(`${pair.name}: ${dt} / ${gt} tokens, not ${tokens}`)
      const t = rate.get(pair.name) ?? { direct: [], gateway: [], ratio: [] }
      const [dr, gr] = [dt / (d.totalMs / 1000), gt / (g.totalMs / 1000)]
      t.direct.push(dr)
      t.gateway.push(gr)
      t.ratio.push(gr / dr)
      rate.set(pair.name, t)
    }
  }

  return rate
}

/** Prints the tables and the target lines; returns the `/v1/messages` figures (for the trace), if measured. */
function printFigures({ ttft, loadAtStart }: FirstTokens, rate: Map<string, { direct: number[]; gateway: number[]; ratio: number[] }>, seed: number) {
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ')
  const spread = (xs: number[], digits: number) => `${median(xs).toFixed(digits)} (${quantile(xs, 0.25).toFixed(digits)}–${quantile(xs, 0.75).toFixed(digits)})`
  const layout = values.pin ? 'pinned: gateway and bare proxy on CPU 0, client and model server on CPU 1' : `${os.availableParallelism()} cores shared`
  console.log(`${ttftRounds} TTFT rounds, ${rounds} tokens/s rounds + ${values.warmup} warm-up calls per path + 1 warm-up round each, alternating order; ${tokens}-token streams (seed ${seed}); ${layout}; load ${loadAtStart.toFixed(2)} at the first round, ${load} (1/5/15 min) at the end`)
  console.log(`gateway node flags: ${gatewayNodeFlags.join(' ') || '(none)'}`)
  console.log('')
  console.log('TTFT (ms): medians; added = per-round differences, median (p25–p75) and p90')
  console.log('')
  console.log('| Stream | direct | gateway | bare proxy | gateway added | gateway added p90 | bare proxy added (the hop) | gateway beyond the hop |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const [name, t] of ttft)
    console.log(`| ${name} | ${median(t.direct).toFixed(2)} | ${median(t.gateway).toFixed(2)} | ${median(t.direct.map((d, i) => d + t.hop[i]!)).toFixed(2)} | ${spread(t.added, 2)} | ${quantile(t.added, 0.9).toFixed(2)} | ${spread(t.hop, 2)} | ${spread(t.beyond, 2)} |`)
  console.log('')
  console.log('| Stream | TTFT direct (ms) | TTFT gateway (ms) | added, median (p25–p75) | tokens/s direct | tokens/s gateway | ratio, median (p25–p75) |')
  console.log('|---|---|---|---|---|---|---|')
  for (const name of ttft.keys()) {
    const t = ttft.get(name)!
    const r = rate.get(name)!
    console.log(
      `| ${name} | ${median(t.direct).toFixed(2)} | ${median(t.gateway).toFixed(2)} | ${median(t.added).toFixed(2)} (${quantile(t.added, 0.25).toFixed(2)}–${quantile(t.added, 0.75).toFixed(2)}) | ` +
        `${median(r.direct).toFixed(0)} | ${median(r.gateway).toFixed(0)} | ${median(r.ratio).toFixed(3)} (${quantile(r.ratio, 0.25).toFixed(3)}–${quantile(r.ratio, 0.75).toFixed(3)}) |`,
    )
  }
  // The gateway's added first-token time beside the bare proxy's (one more process on the path, nothing else),
  // from the same rounds: the gateway's own work (metering included) may cost at most as much again as the hop.
  console.log('')
  for (const [name, t] of ttft) {
    const [gatewayAdded, hop] = [median(t.added), median(t.hop)]
    console.log(
      `${name}: first token added — gateway ${gatewayAdded.toFixed(2)} ms, bare proxy ${hop.toFixed(2)} ms (${hop > 0 ? (gatewayAdded / hop).toFixed(2) : '∞'}×): within 2× ${gatewayAdded <= 2 * hop ? 'met' : 'NOT met'}`,
    )
  }
  // What the gateway adds to the first token of a streamed `/v1/messages` call, from the per-round differences
  // with the direct call of the same round (the order rotating every round).
  const messages = [...ttft.entries()].find(([name]) => name.startsWith('SSE /v1/messages'))?.[1]
  if (messages) {
    const added = median(messages.added)
    console.log('')
    console.log(
      `/v1/messages first token, gateway − direct over ${messages.added.length} rounds: median ${added.toFixed(2)} ms, p90 ${quantile(messages.added, 0.9).toFixed(2)} ms ` +
        `(beyond the bare proxy's hop: median ${median(messages.beyond).toFixed(2)} ms) — the ≤ 1 ms median ${added <= 1 ? 'met' : 'NOT met'} at load ${loadAtStart.toFixed(2)} → ${os.loadavg()[0]!.toFixed(2)}`,
    )
  }
  return messages
}

/** `--trace`: each process's times for the measured `/v1/messages` calls. */
function printTrace(traceFiles: TraceFiles, { traceWindow, messagesPaths }: FirstTokens): void {
  console.log('')
  console.log(`Traced /v1/messages calls of the measured TTFT rounds (ms, median (p25–p75); tracing adds a little of its own):`)
  console.log('')
  console.log(
    `| process | arrival → request to the model server written | written → model server's first bytes read | those bytes → first bytes written to the client | written → on the wire | calls |`,
  )
  console.log('|---|---|---|---|---|---|')
  console.log(`| gateway | ${traceSummary(traceFiles.gateway, traceWindow.from, traceWindow.to).join(' | ')} |`)
  console.log(`| bare proxy | ${traceSummary(traceFiles.proxy, traceWindow.from, traceWindow.to).join(' | ')} |`)
  const stages = stageTimes(traceFiles.gateway, traceWindow.from, traceWindow.to)
  if (stages.length > 0) {
    console.log(`\nThe gateway's time before the model server, by stage of its list (ms, median (p25–p75); each stage's cold cost):\n`)
    console.log('| stage | ms |')
    console.log('|---|---|')
    for (const row of stages) console.log(row)
  }
  // The same model server answers all three paths: its own time differing by path is the other processes'
  // work competing with it for the machine's cores (the gateway's quota commit while the model evaluates).
  if (!values.modelserver)
    console.log(`\nThe model server's own time (its arrival → its first write), by path: ${modelServerTimes(traceFiles.modelServer, traceWindow.from, traceWindow.to, messagesPaths)}`)
}

/** `--profile`: the gateway's self time by area and by function, over the measured rounds. */
function printProfile(profileDir: string, measuredFromUs: number): void {
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
    const { areas, functions, totalMs } = summarise(JSON.parse(readFileSync(path.join(profileDir, file), 'utf8')), 40, measuredFromUs)
    const busy = totalMs - (areas.find(([a]) => a === '((idle))')?.[1] ?? 0)
    console.log(`\ngateway profile — busy ${busy.toFixed(0)} ms of ${totalMs.toFixed(0)} ms; self time by area:`)
    for (const [a, ms] of areas) if (a !== '((idle))') console.log(`  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${a}`)
    console.log('  top functions:')
    for (const [f, ms] of functions.slice(0, 40)) if (!f.startsWith('(idle)')) console.log(`  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${f}`)
  }
}
