/**
 * `npm run bench -- pipeline` — the gateway's request pipeline against bare Express, in one run.
 *
 * Starts bare Express 5 (same Node, a JSON body the size of `GET /agents`) and the compiled gateway
 * (`node dist/src/main.js`, built first) on SQLite and on PostgreSQL (a fresh schema), logs a wallet in
 * through the HTTP API, then drives each with autocannon in alternating rounds (every target once per route
 * per round, so machine noise spreads over all of them) and prints req/s, p50/p99 latency and the ratio to
 * bare Express measured in the same round. The rate limit is raised out of the way (it still runs); response
 * validation is `warn`, as in production.
 *
 * Latency is measured twice per route and target. Saturated: autocannon's 10 connections back to back, so a
 * request mostly waits behind the other nine (p50 ≈ 10 × the service time). Paced (`--paced 0.5`, default):
 * evenly spaced requests at that fraction of the same target's saturated req/s from the same round, where
 * queueing does not dominate and a GC pause or a timer task shows in p99 (support/pacedLoad.ts). Both are
 * recorded per response at full resolution (autocannon's own percentiles are whole milliseconds).
 * `--diagnose` runs every server with `--trace-gc-nvp` and an event-loop-delay probe and prints, per route,
 * collections and pause time per 1,000 requests, bytes allocated and promoted per request, and loop delay.
 *
 *   npm run bench -- pipeline
 *   npm run bench -- pipeline -- --duration 8 --rounds 2 --connections 10
 *   npm run bench -- pipeline -- --routes agents,health --targets sqlite
 *   npm run bench -- pipeline -- --profile          # gateways under `node --cpu-prof`; summaries printed
 *   npm run bench -- pipeline -- --diagnose         # GC counts, pauses, allocation and loop delay per route
 *   npm run bench -- pipeline -- --paced 0          # saturated runs only
 *   npm run bench -- pipeline -- --pin              # servers on CPU 1, load clients on CPU 0 (taskset)
 *   npm run bench -- pipeline -- --minutes 10       # then a mixed-load soak on SQLite, RSS each minute
 *   npm run bench -- pipeline -- --rounds 0 --minutes 10 --targets sqlite   # the soak alone, on a fresh gateway
 *
 * PostgreSQL: TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test); `--targets sqlite` skips it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { type GcEvent, parseGcNvpLine, summariseGc } from './support/gcTrace.js'
import { gatewayNodeFlags } from '../gatewayNodeFlags.js'
import { Latencies } from './support/latencies.js'
import { pinningUnavailable, pinToCpu } from './support/cpuAffinity.js'
import { pacedLoad } from './support/pacedLoad.js'
import { soakBand } from './support/soakBand.js'
import { summarise } from './support/summariseCpuProfile.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    routes: { type: 'string', default: 'health,agents,permissions,unauthorized,redirect,challenge' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    profile: { type: 'boolean', default: false },
    diagnose: { type: 'boolean', default: false },
    paced: { type: 'string', default: '0.5' },
    minutes: { type: 'string', default: '0' },
    'no-build': { type: 'boolean', default: false },
    /** Servers on CPU 1, this process (the load clients) on CPU 0: client and server stop taking turns on one core. */
    pin: { type: 'boolean', default: false },
  },
})
const duration = Number(args.duration)
// Every thread of this process (autocannon, the paced client) on CPU 0; the servers go to CPU 1 (`startChild`).
if (args.pin) {
  const why = pinningUnavailable()
  if (why) throw new Error(`--pin: ${why}`)
  pinToCpu(process.pid, 0)
}
const rounds = Number(args.rounds)
const connections = Number(args.connections)
const pacedFraction = Number(args.paced)
const diagnose = args.diagnose
const probe = join(root, 'scripts/bench/support/loopProbe.mjs')
/** Node flags of a diagnosed server: GC trace lines on stdout and the loop-delay probe. */
const diagnoseFlags = diagnose ? ['--trace-gc-nvp', '--import', probe] : []
const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

type LoopDelay = { p50: number; p99: number; max: number; mean: number }
type Probe = { loopDelay: LoopDelay; memory: NodeJS.MemoryUsage }
type Server = {
  name: string
  url: string
  child: ChildProcess
  stop: () => Promise<void>
  /** Collections seen so far (`--diagnose`: the server's `--trace-gc-nvp` lines). */
  gc: GcEvent[]
  /** `--diagnose`: asks the probe for the loop delay since the previous call and the memory now. */
  probe: () => Promise<Probe | undefined>
}
type Route = { name: string; label: string; method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string; expect: number }

async function startChild(name: string, command: string, argv: string[], env: Record<string, string>): Promise<Server> {
  const child = spawn(command, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  // Its threads so far, and (inherited) every thread it makes later.
  if (args.pin) pinToCpu(child.pid!, 1)
  const gc: GcEvent[] = []
  const probeWaiters: ((p: Probe) => void)[] = []
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.on('line', (line) => {
      const event = parseGcNvpLine(line)
      if (event) return void gc.push(event)
      try {
        const parsed = JSON.parse(line) as { port?: number; level?: number; msg?: string; loopDelay?: LoopDelay; memory?: NodeJS.MemoryUsage }
        if (parsed.loopDelay) probeWaiters.shift()?.(parsed as Probe)
        else if (typeof parsed.port === 'number') resolve(parsed.port)
        else if ((parsed.level ?? 0) >= 50) console.error(`${name}: ${line}`)
      } catch {
        /* not JSON */
      }
    })
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) before listening`)))
  })
  child.stdout!.resume()
  return {
    name,
    url: `http://127.0.0.1:${port}`,
    child,
    gc,
    probe: () => {
      if (!diagnose) return Promise.resolve(undefined)
      const answer = new Promise<Probe | undefined>((resolve) => {
        probeWaiters.push(resolve)
        setTimeout(() => resolve(undefined), 2000).unref()
      })
      child.kill('SIGUSR2')
      return answer
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

async function freshPostgresSchema(): Promise<{ url: string; drop: () => Promise<void> }> {
  const schema = `bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: postgresUrl })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  }
  await run(`CREATE SCHEMA "${schema}"`)
  const separator = postgresUrl.includes('?') ? '&' : '?'
  return {
    url: `${postgresUrl}${separator}options=${encodeURIComponent(`-c search_path=${schema}`)}`,
    drop: () => run(`DROP SCHEMA "${schema}" CASCADE`),
  }
}

function startGateway(name: string, databaseUrl: string | undefined, dataDir: string, profileDir: string | undefined): Promise<Server> {
  const env: Record<string, string> = {
    SERVICE_PORT: '0',
    SERVICE_HOST: '127.0.0.1',
    SERVICE_DATA_DIR: dataDir,
    SERVICE_PUBLIC_ORIGIN: 'http://gw.bench',
    SERVICE_RATE_LIMIT__MAX: '1000000000',
    SERVICE_HTTP__RESPONSE_VALIDATION: 'warn',
    SERVICE_LLM__MODELSERVER__BASE_URL: 'http://127.0.0.1:9',
    LOG_LEVEL: 'info',
    NODE_ENV: 'production',
  }
  if (databaseUrl) env.SERVICE_DATABASE_URL = databaseUrl
  // The Node flags operators start the gateway with (`npm run serve`), so the benchmark measures that process.
  const flags = [...gatewayNodeFlags, ...diagnoseFlags, ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])]
  return startChild(name, process.execPath, [...flags, 'dist/src/main.js'], env)
}

async function login(base: string): Promise<{ token: string; wallet: string }> {
  const account = privateKeyToAccount(generatePrivateKey())
  const c = await fetch(`${base}/users/challenge`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ wallet: account.address }) })
  const { challenge } = (await c.json()) as { challenge: string }
  const r = await fetch(`${base}/users/register-with-signature`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ wallet: account.address, challenge, signature: await account.signMessage({ message: challenge }) }),
  })
  if (r.status !== 200) throw new Error(`login failed: ${r.status} ${await r.text()}`)
  return { token: ((await r.json()) as { session_token: string }).session_token, wallet: account.address }
}

function routesFor(token: string, wallet: string): Route[] {
  const session = { 'x-session-token': token }
  return [
    { name: 'health', label: 'GET /health (public)', method: 'GET', path: '/health', expect: 200 },
    { name: 'agents', label: 'GET /agents (session)', method: 'GET', path: '/agents', headers: session, expect: 200 },
    { name: 'permissions', label: 'GET /users/{wallet}/permissions (session)', method: 'GET', path: `/users/${wallet}/permissions`, headers: session, expect: 200 },
    { name: 'unauthorized', label: 'GET /agents, no token (401)', method: 'GET', path: '/agents', expect: 401 },
    { name: 'redirect', label: 'GET /journal, browser, no session (302)', method: 'GET', path: '/journal', headers: { accept: 'text/html' }, expect: 302 },
    {
      name: 'challenge',
      label: 'POST /users/challenge',
      method: 'POST',
      path: '/users/challenge',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ wallet }),
      expect: 200,
    },
  ]
}

/** `cpuUs`: the server process's CPU time (user + system) per request — unlike req/s, barely moved by other load on the machine. */
type Figures = { rps: number; p50: number; p99: number; wrong: number; errors: number; cpuUs: number; diagnosis?: Diagnosis }
/** `--diagnose`: what the server did during one measured run, per request where it scales with requests. */
type Diagnosis = {
  requests: number
  scavengesPer1k: number
  markCompactsPer1k: number
  /** GC pause time (plus incremental marking steps) per 1,000 requests, and the longest single pause or step. */
  gcMsPer1k: number
  gcMaxMs: number
  allocatedKbPerReq: number
  promotedBytesPerReq: number
  loopDelay?: LoopDelay
}
/** A paced run: latency at a fixed rate below saturation. */
type Paced = { rate: number; p50: number; p99: number; sendLateP99: number; wrong: number; diagnosis?: Diagnosis }

/** User + system CPU time of a process so far, in microseconds (from /proc; clock ticks of 10 ms). */
function cpuTimeUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
}
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100

async function load(
  server: Pick<Server, 'url' | 'child' | 'gc' | 'probe'>,
  route: Pick<Route, 'method' | 'path' | 'headers' | 'body'>,
  seconds: number,
  expect?: number,
): Promise<Figures> {
  let wrong = 0
  const pid = server.child.pid!
  const latencies = new Latencies()
  await server.probe() // starts the probe's interval
  const gcBefore = server.gc.length
  const cpuBefore = cpuTimeUs(pid)
  const result = await autocannon({
    url: server.url + route.path,
    method: route.method,
    headers: route.headers,
    body: route.body,
    connections,
    duration: seconds,
    setupClient: (client) =>
      client.on('response', (status: number, _bytes: number, ms: number) => {
        if (expect !== undefined && status !== expect) wrong++
        else latencies.add(ms)
      }),
  })
  const requests = Math.max(1, result.requests.total)
  const cpuUs = (cpuTimeUs(pid) - cpuBefore) / requests
  const [p50, p99] = latencies.percentiles([50, 99]) as [number, number]
  const figures: Figures = { rps: result.requests.average, p50, p99, wrong, errors: result.errors + result.timeouts, cpuUs }
  if (diagnose) figures.diagnosis = diagnosisOf(server.gc.slice(gcBefore), requests, (await server.probe())?.loopDelay)
  return figures
}

function diagnosisOf(events: GcEvent[], requests: number, loopDelay: LoopDelay | undefined): Diagnosis {
  const gc = summariseGc(events)
  return {
    requests,
    scavengesPer1k: (1000 * gc.scavenges) / requests,
    markCompactsPer1k: (1000 * gc.markCompacts) / requests,
    gcMsPer1k: (1000 * (gc.pauseTotalMs + gc.incrementalMs)) / requests,
    gcMaxMs: Math.max(gc.pauseMaxMs, gc.incrementalStepMaxMs),
    allocatedKbPerReq: gc.allocatedBytes / 1024 / requests,
    promotedBytesPerReq: gc.promotedBytes / requests,
    loopDelay,
  }
}

/** Latency at `fraction` of a measured saturated rate (evenly spaced requests). */
async function paced(server: Server, route: Pick<Route, 'method' | 'path' | 'headers' | 'body'>, saturatedRps: number, expect: number): Promise<Paced> {
  const rate = Math.max(1, Math.round(saturatedRps * pacedFraction))
  await server.probe()
  const gcBefore = server.gc.length
  const r = await pacedLoad(server.url, route, { rate, seconds: duration, connections, expect })
  const [p50, p99] = r.latencies.percentiles([50, 99]) as [number, number]
  const result: Paced = { rate: r.rate, p50, p99, sendLateP99: r.sendLateP99, wrong: r.wrong + r.errors }
  if (diagnose) result.diagnosis = diagnosisOf(server.gc.slice(gcBefore), Math.max(1, r.requests), (await server.probe())?.loopDelay)
  return result
}

/** Resident set size of a process, KiB (/proc). */
function rssKb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

/** Monotonic µs when the measured rounds began (profiles are summarised from there). */
let measuredFromUs = 0

async function main(): Promise<void> {
  if (!args['no-build']) {
    console.log('building (npm run build) …')
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' })
  }
  const targets = args.targets.split(',').filter(Boolean)
  const profileDir = args.profile ? mkdtempSync(join(os.tmpdir(), 'pipeline-prof-')) : undefined
  const cleanups: (() => Promise<void> | void)[] = []
  const servers: Server[] = []
  try {
    const gateways: Server[] = []
    for (const target of targets) {
      const dataDir = mkdtempSync(join(os.tmpdir(), `pipeline-${target}-`))
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }))
      let databaseUrl: string | undefined
      if (target === 'postgres') {
        const schema = await freshPostgresSchema()
        cleanups.push(schema.drop)
        databaseUrl = schema.url
      } else if (target !== 'sqlite') throw new Error(`unknown target ${target}`)
      const gateway = await startGateway(target, databaseUrl, dataDir, profileDir)
      servers.push(gateway)
      gateways.push(gateway)
    }
    // One wallet per gateway (each has its own database); the JSON size of its `GET /agents` sets the baseline's.
    const routesByGateway = new Map<Server, Route[]>()
    let agentsBytes = 0
    for (const gateway of gateways) {
      const { token, wallet } = await login(gateway.url)
      routesByGateway.set(gateway, routesFor(token, wallet))
      const agents = await fetch(`${gateway.url}/agents`, { headers: { 'x-session-token': token } })
      agentsBytes = (await agents.arrayBuffer()).byteLength
    }
    // Bare Express runs with Node's default heap flags (it allocates a few KB per request; see docs/performance.md).
    const bare = await startChild('bare', process.execPath, [...diagnoseFlags, join(root, 'scripts/bench/support/bareExpress.mjs')], { BODY_BYTES: String(agentsBytes) })
    servers.push(bare)
    const wanted = new Set(args.routes.split(','))
    const routeNames = routesFor('', '')
      .filter((r) => wanted.has(r.name))
      .map((r) => r.name)

    console.log(
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ` +
        `autocannon ${connections} connections × ${duration} s, ${rounds} round(s); bare Express body ${agentsBytes} bytes; ` +
        `gateway node flags: ${gatewayNodeFlags.join(' ') || '(none)'}` +
        (pacedFraction > 0 ? `; paced runs at ${pacedFraction} of each target's saturated req/s` : '') +
        (args.pin ? '; pinned: servers on CPU 1, load clients on CPU 0' : ''),
    )
    // Warm-up: JIT, statement caches, connection pools.
    for (const gateway of gateways) for (const route of routesByGateway.get(gateway)!) await load(gateway, route, 1)
    await load(bare, { method: 'GET', path: '/' }, 1)

    measuredFromUs = Number(process.hrtime.bigint() / 1000n)
    const figures = new Map<string, Figures[]>()
    const pacedFigures = new Map<string, Paced[]>()
    const add = (key: string, f: Figures) => figures.set(key, [...(figures.get(key) ?? []), f])
    const addPaced = (key: string, f: Paced) => pacedFigures.set(key, [...(pacedFigures.get(key) ?? []), f])
    const routeOf = (server: Server, name: string): Route =>
      server === bare ? { name, label: '', method: 'GET', path: '/', expect: 200 } : routesByGateway.get(server)!.find((r) => r.name === name)!
    const keyOf = (server: Server, name: string) => `${server === bare ? 'bare' : server.name}/${name}`
    for (let round = 1; round <= rounds; round++) {
      for (const name of routeNames) {
        // Alternate the order every round so neither side always runs first.
        const order = round % 2 ? [bare, ...gateways] : [...gateways, bare]
        for (const server of order) {
          const route = routeOf(server, name)
          add(keyOf(server, name), await load(server, route, duration, route.expect))
        }
        // Then each target at a fixed fraction of the rate it just reached.
        if (pacedFraction > 0)
          for (const server of order) {
            const route = routeOf(server, name)
            addPaced(keyOf(server, name), await paced(server, route, figures.get(keyOf(server, name))!.at(-1)!.rps, route.expect))
          }
      }
      process.stdout.write(`round ${round}/${rounds} done\n`)
    }

    // `--rounds 0 --minutes N`: the memory soak alone, on a freshly started gateway.
    if (rounds > 0) {
      printResults(figures, routeNames, gateways, targets)
      if (pacedFraction > 0) printPaced(pacedFigures, routeNames, gateways)
      if (diagnose) printDiagnosis(figures, routeNames, gateways)
    }

    const minutes = Number(args.minutes)
    const sqlite = gateways.find((g) => g.name === 'sqlite')
    if (minutes > 0 && sqlite) await soak(sqlite, routesByGateway.get(sqlite)!.filter((r) => wanted.has(r.name)), minutes)
  } finally {
    for (const server of servers) await server.stop()
    for (const cleanup of cleanups.reverse()) await cleanup()
  }
  if (profileDir) printProfiles(profileDir)
}

function printResults(figures: Map<string, Figures[]>, routeNames: string[], gateways: Server[], targets: string[]): void {
  const labels = new Map(routesFor('', '').map((r) => [r.name, r.label]))
  console.log(`\nsaturated: ${connections} connections back to back (latency mostly queueing behind the other connections)`)
  const rows: string[][] = [['route', 'target', 'req/s', 'p50 ms', 'p99 ms', 'p99/p50', 'ratio to bare', 'CPU µs/req', 'CPU ratio', 'wrong status']]
  for (const name of routeNames) {
    const bareFs = figures.get(`bare/${name}`)!
    const bareRps = median(bareFs.map((f) => f.rps))
    const bareCpu = median(bareFs.map((f) => f.cpuUs))
    rows.push([labels.get(name)!, 'bare Express', bareRps.toFixed(0), fmt(bareFs, 'p50'), fmt(bareFs, 'p99'), tailRatio(bareFs), '1.00', bareCpu.toFixed(0), '1.00', ''])
    for (const gateway of gateways) {
      const fs = figures.get(`${gateway.name}/${name}`)!
      // Ratio per round (gateway and bare measured back to back), then the median over rounds.
      const ratios = fs.map((f, i) => f.rps / figures.get(`bare/${name}`)![i]!.rps)
      const wrong = fs.reduce((n, f) => n + f.wrong + f.errors, 0)
      const cpu = median(fs.map((f) => f.cpuUs))
      // CPU ratio: bare Express's CPU per request over the gateway's — the req/s ratio a dedicated core would give.
      rows.push(['', gateway.name, median(fs.map((f) => f.rps)).toFixed(0), fmt(fs, 'p50'), fmt(fs, 'p99'), tailRatio(fs), median(ratios).toFixed(2), cpu.toFixed(0), (bareCpu / cpu).toFixed(2), wrong ? String(wrong) : ''])
    }
  }
  printTable(rows)
  if (targets.includes('sqlite') && targets.includes('postgres')) {
    for (const name of routeNames) {
      const s = median(figures.get(`sqlite/${name}`)!.map((f) => f.rps))
      const p = median(figures.get(`postgres/${name}`)!.map((f) => f.rps))
      console.log(`postgres / sqlite, ${labels.get(name)}: ${(p / s).toFixed(2)}`)
    }
  }
}

/** Paced runs: each target at a fixed fraction of its own saturated rate, so queueing does not dominate latency. */
function printPaced(pacedFigures: Map<string, Paced[]>, routeNames: string[], gateways: Server[]): void {
  const labels = new Map(routesFor('', '').map((r) => [r.name, r.label]))
  console.log(`paced: evenly spaced requests at ${pacedFraction} of each target's saturated req/s (a harsher view of the tail: it measures the server only where client late p99 is well under its p99)`)
  const rows: string[][] = [
    ['route', 'target', 'req/s', 'p50 ms', 'p99 ms', 'p99/p50', 'client late p99 ms', ...(diagnose ? ['GC ms/1k', 'GC max ms', 'loop delay p99/max ms'] : []), 'wrong status'],
  ]
  for (const name of routeNames) {
    for (const [i, key] of [`bare/${name}`, ...gateways.map((g) => `${g.name}/${name}`)].entries()) {
      const ps = pacedFigures.get(key)!
      const wrong = ps.reduce((n, p) => n + p.wrong, 0)
      rows.push([
        i === 0 ? labels.get(name)! : '',
        i === 0 ? 'bare Express' : key.split('/')[0]!,
        median(ps.map((p) => p.rate)).toFixed(0),
        median(ps.map((p) => p.p50)).toFixed(2),
        median(ps.map((p) => p.p99)).toFixed(2),
        median(ps.map((p) => p.p99 / p.p50)).toFixed(1),
        median(ps.map((p) => p.sendLateP99)).toFixed(2),
        ...(diagnose ? pacedDiagnosis(ps.map((p) => p.diagnosis!)) : []),
        wrong ? String(wrong) : '',
      ])
    }
  }
  printTable(rows)
}

function pacedDiagnosis(ds: Diagnosis[]): string[] {
  const delays = ds.map((d) => d.loopDelay).filter((d) => d !== undefined)
  return [
    median(ds.map((d) => d.gcMsPer1k)).toFixed(1),
    median(ds.map((d) => d.gcMaxMs)).toFixed(1),
    delays.length ? `${median(delays.map((d) => d.p99)).toFixed(2)} / ${median(delays.map((d) => d.max)).toFixed(1)}` : '',
  ]
}

/** `--diagnose`: garbage collection and event-loop delay during the saturated runs (medians over rounds). */
function printDiagnosis(figures: Map<string, Figures[]>, routeNames: string[], gateways: Server[]): void {
  const labels = new Map(routesFor('', '').map((r) => [r.name, r.label]))
  console.log('diagnosis (saturated runs): collections and GC time per 1,000 requests, allocation per request, event-loop delay')
  const rows: string[][] = [
    ['route', 'target', 'scavenges/1k', 'mark-compacts/1k', 'GC ms/1k', 'GC max ms', 'KB alloc/req', 'B promoted/req', 'loop delay p50/p99/max ms'],
  ]
  for (const name of routeNames) {
    for (const [i, key] of [`bare/${name}`, ...gateways.map((g) => `${g.name}/${name}`)].entries()) {
      const ds = figures.get(key)!.map((f) => f.diagnosis!)
      const m = (pick: (d: Diagnosis) => number, digits = 1) => median(ds.map(pick)).toFixed(digits)
      const delays = ds.map((d) => d.loopDelay).filter((d) => d !== undefined)
      rows.push([
        i === 0 ? labels.get(name)! : '',
        i === 0 ? 'bare Express' : key.split('/')[0]!,
        m((d) => d.scavengesPer1k, 2),
        m((d) => d.markCompactsPer1k, 3),
        m((d) => d.gcMsPer1k),
        m((d) => d.gcMaxMs),
        m((d) => d.allocatedKbPerReq),
        m((d) => d.promotedBytesPerReq, 0),
        delays.length ? `${median(delays.map((d) => d.p50)).toFixed(2)} / ${median(delays.map((d) => d.p99)).toFixed(2)} / ${median(delays.map((d) => d.max)).toFixed(1)}` : '',
      ])
    }
  }
  printTable(rows)
}

function printProfiles(profileDir: string): void {
  for (const file of readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))) {
    const { areas, functions, totalMs } = summarise(JSON.parse(readFileSync(join(profileDir, file), 'utf8')), 30, measuredFromUs)
    const busy = totalMs - (areas.find(([a]) => a === '((idle))')?.[1] ?? 0)
    console.log(`\nprofile ${join(profileDir, file)} — busy ${busy.toFixed(0)} ms; self time by area:`)
    for (const [a, ms] of areas) if (a !== '((idle))') console.log(`  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${a}`)
    console.log('  top functions:')
    for (const [f, ms] of functions.slice(0, 30)) if (!f.startsWith('(idle)')) console.log(`  ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${f}`)
  }
}

/** Mixed load (every route in turn, one minute each slice) on one gateway; RSS sampled each minute. */
async function soak(gateway: Server, routes: Route[], minutes: number): Promise<void> {
  console.log(
    `\nsoak: ${minutes} min of mixed load on ${gateway.name} (every route in turn, ${connections} connections), load average ${loadavg()}; ` +
      `RSS after each minute against minute 1 (every minute within ±15%)`,
  )
  const samples: number[] = []
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)
  const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)}%`
  for (let minute = 1; minute <= minutes; minute++) {
    const slice = 60 / routes.length
    let requests = 0
    for (const route of routes) requests += (await load(gateway, route, slice)).rps * slice
    samples.push(rssKb(gateway.child.pid!) * 1024)
    const probe = await gateway.probe()
    const heap = probe ? `; heap used ${mib(probe.memory.heapUsed)} of ${mib(probe.memory.heapTotal)} MiB, external ${mib(probe.memory.external)} MiB` : ''
    const deviation = (samples.at(-1)! - samples[0]!) / samples[0]!
    const inside = Math.abs(deviation) <= 0.15 ? 'inside' : 'OUTSIDE'
    console.log(
      `  minute ${String(minute).padStart(2)}: RSS ${mib(samples.at(-1)!)} MiB, ${minute === 1 ? 'reference' : `${pct(deviation)} → ${inside} ±15%`}` +
        ` (${Math.round(requests / 60)} req/s, load average ${loadavg()}${heap})`,
    )
  }
  const verdict = soakBand(samples)
  const outside = verdict.minutes.filter((m) => !m.inside).map((m) => m.minute)
  console.log(
    `  verdict: ${verdict.allInside ? 'every minute inside ±15% of minute 1 — target MET' : `minute(s) ${outside.join(', ')} outside ±15% of minute 1 — target NOT MET`}; ` +
      `largest deviation ${pct(verdict.worst.deviation)} (minute ${verdict.worst.minute}); minute ${minutes} ${pct(verdict.minutes.at(-1)!.deviation)}`,
  )
}

const loadavg = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')

function fmt(fs: Figures[], key: 'p50' | 'p99'): string {
  return median(fs.map((f) => f[key])).toFixed(2)
}

/** p99 over p50, per round, then the median. */
function tailRatio(fs: Figures[]): string {
  return median(fs.map((f) => f.p99 / f.p50)).toFixed(1)
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  console.log()
  for (const row of rows) console.log(row.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  '))
  console.log()
}

await main()
