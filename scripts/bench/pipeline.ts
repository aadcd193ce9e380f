/**
 * `npm run bench -- pipeline` — the gateway's request pipeline against bare Express, in one run (issue 17).
 *
 * Starts bare Express 5 (same Node, a JSON body the size of `GET /agents`) and the compiled gateway
 * (`node dist/src/main.js`, built first) on SQLite and on PostgreSQL (a fresh schema), logs a wallet in
 * through the HTTP API, then drives each with autocannon in alternating rounds (every target once per route
 * per round, so machine noise spreads over all of them) and prints req/s, p50/p99 latency and the ratio to
 * bare Express measured in the same round. The rate limit is raised out of the way (it still runs); response
 * validation is `warn`, as in production.
 *
 *   npm run bench -- pipeline
 *   npm run bench -- pipeline -- --duration 8 --rounds 2 --connections 10
 *   npm run bench -- pipeline -- --routes agents,health --targets sqlite
 *   npm run bench -- pipeline -- --profile          # gateways under `node --cpu-prof`; summaries printed
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
    minutes: { type: 'string', default: '0' },
    'no-build': { type: 'boolean', default: false },
  },
})
const duration = Number(args.duration)
const rounds = Number(args.rounds)
const connections = Number(args.connections)
const postgresUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

type Server = { name: string; url: string; child: ChildProcess; stop: () => Promise<void> }
type Route = { name: string; label: string; method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string; expect: number }

async function startChild(name: string, command: string, argv: string[], env: Record<string, string>): Promise<Server> {
  const child = spawn(command, argv, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! })
    lines.on('line', (line) => {
      try {
        const parsed = JSON.parse(line) as { port?: number; level?: number; msg?: string }
        if (typeof parsed.port === 'number') resolve(parsed.port)
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
  const flags = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
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
type Figures = { rps: number; p50: number; p99: number; wrong: number; errors: number; cpuUs: number }

/** User + system CPU time of a process so far, in microseconds (from /proc; clock ticks of 10 ms). */
function cpuTimeUs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
}
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100

async function load(
  url: string,
  route: Pick<Route, 'method' | 'path' | 'headers' | 'body'>,
  seconds: number,
  expect?: number,
  pid?: number,
): Promise<Figures> {
  let wrong = 0
  const cpuBefore = pid ? cpuTimeUs(pid) : 0
  const result = await autocannon({
    url: url + route.path,
    method: route.method,
    headers: route.headers,
    body: route.body,
    connections,
    duration: seconds,
    setupClient: expect === undefined ? undefined : (client) => client.on('response', (status: number) => void (status !== expect && wrong++)),
  })
  const cpuUs = pid ? (cpuTimeUs(pid) - cpuBefore) / Math.max(1, result.requests.total) : 0
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, wrong, errors: result.errors + result.timeouts, cpuUs }
}

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
    const bare = await startChild('bare', process.execPath, [join(root, 'scripts/bench/support/bareExpress.mjs')], { BODY_BYTES: String(agentsBytes) })
    servers.push(bare)
    const wanted = new Set(args.routes.split(','))
    const routeNames = routesFor('', '')
      .filter((r) => wanted.has(r.name))
      .map((r) => r.name)

    console.log(
      `node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ` +
        `autocannon ${connections} connections × ${duration} s, ${rounds} round(s); bare Express body ${agentsBytes} bytes`,
    )
    // Warm-up: JIT, statement caches, connection pools.
    for (const gateway of gateways) for (const route of routesByGateway.get(gateway)!) await load(gateway.url, route, 1)
    await load(bare.url, { method: 'GET', path: '/' }, 1)

    measuredFromUs = Number(process.hrtime.bigint() / 1000n)
    const figures = new Map<string, Figures[]>()
    const add = (key: string, f: Figures) => figures.set(key, [...(figures.get(key) ?? []), f])
    for (let round = 1; round <= rounds; round++) {
      for (const name of routeNames) {
        // Alternate the order every round so neither side always runs first.
        const order = round % 2 ? [bare, ...gateways] : [...gateways, bare]
        for (const server of order) {
          if (server === bare) add(`bare/${name}`, await load(bare.url, { method: 'GET', path: '/' }, duration, 200, bare.child.pid))
          else {
            const route = routesByGateway.get(server)!.find((r) => r.name === name)!
            add(`${server.name}/${name}`, await load(server.url, route, duration, route.expect, server.child.pid))
          }
        }
      }
      process.stdout.write(`round ${round}/${rounds} done\n`)
    }

    // `--rounds 0 --minutes N`: the memory soak alone, on a freshly started gateway.
    if (rounds > 0) printResults(figures, routeNames, gateways, targets)

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
  const rows: string[][] = [['route', 'target', 'req/s', 'p50 ms', 'p99 ms', 'ratio to bare', 'CPU µs/req', 'CPU ratio', 'wrong status']]
  for (const name of routeNames) {
    const bareRps = median(figures.get(`bare/${name}`)!.map((f) => f.rps))
    const bareCpu = median(figures.get(`bare/${name}`)!.map((f) => f.cpuUs))
    rows.push([labels.get(name)!, 'bare Express', bareRps.toFixed(0), fmt(figures.get(`bare/${name}`)!, 'p50'), fmt(figures.get(`bare/${name}`)!, 'p99'), '1.00', bareCpu.toFixed(0), '1.00', ''])
    for (const gateway of gateways) {
      const fs = figures.get(`${gateway.name}/${name}`)!
      // Ratio per round (gateway and bare measured back to back), then the median over rounds.
      const ratios = fs.map((f, i) => f.rps / figures.get(`bare/${name}`)![i]!.rps)
      const wrong = fs.reduce((n, f) => n + f.wrong + f.errors, 0)
      const cpu = median(fs.map((f) => f.cpuUs))
      // CPU ratio: bare Express's CPU per request over the gateway's — the req/s ratio a dedicated core would give.
      rows.push(['', gateway.name, median(fs.map((f) => f.rps)).toFixed(0), fmt(fs, 'p50'), fmt(fs, 'p99'), median(ratios).toFixed(2), cpu.toFixed(0), (bareCpu / cpu).toFixed(2), wrong ? String(wrong) : ''])
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
  console.log(`\nsoak: ${minutes} min of mixed load on ${gateway.name}, RSS after each minute`)
  const samples: number[] = []
  for (let minute = 1; minute <= minutes; minute++) {
    const slice = 60 / routes.length
    for (const route of routes) await load(gateway.url, route, slice)
    samples.push(rssKb(gateway.child.pid!))
    console.log(`  minute ${minute}: RSS ${(samples.at(-1)! / 1024).toFixed(1)} MiB`)
  }
  const first = samples[0]!
  const worst = Math.max(...samples.map((s) => Math.abs(s - first) / first))
  console.log(`  largest deviation from minute 1: ${(100 * worst).toFixed(1)}% (target ±15%)`)
}

function fmt(fs: Figures[], key: 'p50' | 'p99'): string {
  return median(fs.map((f) => f[key])).toFixed(0)
}

function printTable(rows: string[][]): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  console.log()
  for (const row of rows) console.log(row.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  '))
  console.log()
}

await main()
