/**
 * The spec-driven fuzzer, in three phases over both documents, every exchange given every named check that
 * concerns it (checks.ts) and counted:
 * 1. probes — each path with every method it does not document (405 + `Allow`), each required header left out;
 * 2. drawn requests — for every operation (requestArbitrary.ts; MCP calls from the tools the document lists),
 *    under each credential tier (none, a live wallet session, the overlord's bearer, garbage credentials), a few
 *    in flight; bounded by `count` and `seconds`. Request `i` is drawn from the seed and `i` alone (operation and
 *    tier round-robin, the request by fast-check from seed ⊕ i), so `--seed` reproduces a run and `--only i` one
 *    request;
 * 3. stateful chains along the documents' OpenAPI links (chains.ts, chainSeeds.ts).
 * Then both servers must still answer. The report has the counts per check, the violations (each with the
 * requests that reproduce it), and the coverage (coverage.ts).
 */
import fc from 'fast-check'
import type { PrivateKeyAccount } from 'viem/accounts'
import { documentRouter, precompileDocument } from '../DocumentClient.js'
import type { Payer, Server } from '../types.js'
import { Chains, type ChainStats, documentedLinks } from './chains.js'
import { chainSeeds } from './chainSeeds.js'
import type { CheckCounts } from './checks.js'
import type { CoverageReport } from './coverage.js'
import { Credentials, TIERS, type Tier } from './Credentials.js'
import { FuzzRun, replayStep, type Violation } from './FuzzRun.js'
import type { KnownFailure } from './knownFailures.js'
import { addListedTools, MCP_ACCEPT, mcpRequestArbitrary, mcpToolsOf } from './mcpChecks.js'
import { loadOperations, type Operation } from './operations.js'
import { probeCheck, probes } from './probes.js'
import { type FuzzRequest, requestArbitrary } from './requestArbitrary.js'
import { responseChecks } from './responseChecks.js'
import { isAnswer, sendRequest } from './sendRequest.js'

export { Credentials, TIERS, type Tier, type Violation }

export type FuzzOptions = {
  urls: Partial<Record<Server, string>>
  seed: number
  /** At most this many drawn requests. */
  count: number
  /** The drawn requests stop starting after this long (seconds). */
  seconds: number
  concurrency?: number
  /** The shadow tier's overlord key: without it the bearer tier sends none. */
  overlord?: PrivateKeyAccount
  /** Only drawn request number `i` (reproduce one violation); no probes, no chains. */
  only?: number
  /** Model-server defects owned by another change, reported apart (knownFailures.ts). */
  knownFailures?: readonly KnownFailure[]
  requestTimeoutMs?: number
  /** The `max_response_time` limit (default 30,000 ms). */
  maxResponseMs?: number
  /** Payers by network pattern: a chain then starts from a paid upload. */
  payers?: Record<string, Payer>
  /** `host:port` of a registry the model server may pull from: a chain then starts from a pull. */
  registry?: string
  /** Wallets whose keys the fuzzer holds (the payer's): each logs in for a chain. */
  wallets?: PrivateKeyAccount[]
  /** Chains started from each root (default 2; 0: no stateful phase). */
  chainsPerRoot?: number
}

export type FuzzReport = {
  seed: number
  requests: number
  seconds: number
  operations: number
  byServer: Record<string, number>
  byStatus: Record<string, number>
  /** Requests and total milliseconds per operation (where the run's time went). */
  byOperation: Record<string, { requests: number; ms: number }>
  /** Each named check: how many exchanges it applied to, how many failed it. */
  checks: CheckCounts
  violations: Violation[]
  known: Violation[]
  /** Requests still in flight when the run's time (plus a grace) was up: cut off, not counted as violations. */
  cutOff: number
  /** Requests sent again once because the server had closed their idle pooled connection. */
  retried: number
  coverage: CoverageReport
  /** The stateful phase: per root, its runs, the statuses it got and the steps its chains took. */
  chains: ChainStats
}

function mix(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 0x9e3779b9, 0x85ebca6b)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0
  return (h ^ (h >>> 15)) | 0
}

/** The MCP protocol version the gateway announces, and its tools' output schemas (`initialize`, `tools/list`). */
async function mcpSession(gateway: string | undefined, mcp: Operation | undefined): Promise<Record<string, string>> {
  const headers: Record<string, string> = { accept: MCP_ACCEPT }
  if (!gateway || !mcp) return headers
  const rpc = async (message: unknown) => {
    const res = await sendRequest(gateway, { operation: mcp.id, mutation: 'valid', method: 'POST', path: mcp.path, headers: {}, body: { text: JSON.stringify(message) } }, { ...headers, 'content-type': 'application/json' }, { timeoutMs: 30_000 })
    return isAnswer(res) && res.status === 200 ? (JSON.parse(res.text) as unknown) : undefined
  }
  const init = (await rpc({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'conformance-fuzz', version: '1.0.0' } } })) as { result?: { protocolVersion?: unknown } } | undefined
  if (typeof init?.result?.protocolVersion === 'string') headers['mcp-protocol-version'] = init.result.protocolVersion
  return headers
}

export async function fuzz(options: FuzzOptions): Promise<FuzzReport> {
  const setup = await prepareRun(options)
  const started = Date.now()
  const { run, cut } = setup
  if (options.only === undefined) await sendProbes(run, setup.operations, options.seed)
  // the stateful chains run on a deployment the drawn requests have not disturbed yet (the installed models
  // there, upload sessions free)
  const chainStats = options.only === undefined && (options.chainsPerRoot ?? 2) > 0 ? await runChains(run, setup.operations, options) : {}
  await sendDrawn(setup, options, cut)
  await checkServersAnswer(run, setup.servers, options.urls)
  return {
    seed: options.seed,
    requests: run.requests,
    seconds: Math.round((Date.now() - started) / 100) / 10,
    operations: setup.operations.length,
    byServer: run.byServer,
    byStatus: run.byStatus,
    byOperation: run.byOperation,
    checks: run.counts,
    violations: run.violations,
    known: run.known,
    cutOff: run.cutOff,
    retried: run.retried,
    coverage: run.coverage.report(),
    chains: chainStats,
  }
}

/** What a run draws from and sends through, built before its first request. */
type RunSetup = {
  servers: Server[]
  operations: Operation[]
  /** The operations in the seed's order: request `i` is of `order[i % order.length]`. */
  order: Operation[]
  arbitraries: Map<Operation, fc.Arbitrary<FuzzRequest>>
  mcp: Operation | undefined
  mcpArbitrary: fc.Arbitrary<FuzzRequest> | undefined
  run: FuzzRun
  /** Aborted a grace after the drawn requests' deadline: requests still in flight are cut off. */
  cut: AbortController
}

async function prepareRun(options: FuzzOptions): Promise<RunSetup> {
  const servers = (['gateway', 'modelserver'] as const).filter((s) => options.urls[s])
  const operations: Operation[] = []
  for (const server of servers) operations.push(...(await loadOperations(server)))
  if (operations.length === 0) throw new Error('no operations: give a gateway and/or a model server URL')
  const order = fc.sample(fc.shuffledSubarray(operations, { minLength: operations.length, maxLength: operations.length }), { seed: options.seed, numRuns: 1 })[0]!
  // Everything a request needs is built before the first one (the arbitrary of every operation, every response
  // schema compiled): compiling in the middle of the run blocks the event loop for seconds on a loaded machine.
  const arbitraries = new Map<Operation, fc.Arbitrary<FuzzRequest>>(operations.map((op) => [op, requestArbitrary(op)]))
  for (const server of servers) precompileDocument(server)
  const mcp = operations.find((op) => op.mcpTools)
  const mcpTools = mcpToolsOf(mcp)
  const mcpHeaders = await mcpSession(options.urls.gateway, mcp)
  const mcpArbitrary = mcp ? mcpRequestArbitrary(mcp, mcpTools, mcpHeaders) : undefined
  const cut = new AbortController()
  const run = new FuzzRun({
    urls: options.urls,
    credentials: new Credentials(options.urls.gateway, options.overlord, options.seed),
    operations,
    links: documentedLinks(operations),
    mcpTools,
    errorSchema: options.urls.gateway ? (documentRouter('gateway').document.components?.schemas?.Error as Record<string, unknown> | undefined) : undefined,
    knownFailures: options.knownFailures,
    requestTimeoutMs: options.requestTimeoutMs ?? 60_000,
    maxResponseMs: options.maxResponseMs ?? 30_000,
    cut: cut.signal,
  })
  if (mcp && options.urls.gateway) {
    const listed = await sendRequest(options.urls.gateway, { operation: mcp.id, mutation: 'valid', method: 'POST', path: mcp.path, headers: {}, body: { text: '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' } }, { ...mcpHeaders, 'content-type': 'application/json' }, { timeoutMs: 30_000 })
    if (isAnswer(listed) && listed.status === 200) addListedTools(mcpTools, JSON.parse(listed.text))
  }
  return { servers: [...servers], operations, order, arbitraries, mcp, mcpArbitrary, run, cut }
}

/** Phase 1: each path with the methods it does not document, each required header left out. */
async function sendProbes(run: FuzzRun, operations: Operation[], seed: number): Promise<void> {
  for (const [i, probe] of probes(operations, seed).entries()) {
    const x = await run.send(probe.op, probe.request, probe.tier)
    run.check(x, 'probe', i, [replayStep(x, probe.request, { probe: { check: probe.check, allowed: probe.allowed, header: probe.header } })], isAnswer(x.answer) ? [probeCheck(probe, x.answer.status, x.answer.headers)] : [], { judge: probe.check !== 'unsupported_method' })
  }
}

/** Phase 2: stateful chains along the documents' links, `chainsPerRoot` rounds from every root. */
async function runChains(run: FuzzRun, operations: Operation[], options: FuzzOptions): Promise<ChainStats> {
  const seeds = chainSeeds(operations, run, { overlord: options.overlord, payers: options.payers, registry: options.registry, seed: options.seed, wallets: options.wallets })
  const chains = new Chains({ run, operations, seed: options.seed, completers: seeds.completers })
  for (let round = 0; round < (options.chainsPerRoot ?? 2); round++) {
    for (const root of seeds.roots) {
      const start = await root()
      if (start) await chains.run(start)
    }
  }
  return chains.stats
}

/**
 * Phase 3: drawn requests, bounded in time: no request starts after the deadline, and one still in flight a
 * grace later (an inference queued behind others) is cut off, so `--seconds` bounds their wall time, not only
 * their start. One pool of workers per server, so a slow one (inference) does not starve the other; each pool
 * takes the next index whose operation is on its server. Index i's request depends on the seed and i only.
 */
async function sendDrawn(setup: RunSetup, options: FuzzOptions, cut: AbortController): Promise<void> {
  const { order, servers, run } = setup
  const deadline = Date.now() + options.seconds * 1000
  const grace = Math.min(15, Math.max(2, options.seconds / 10)) * 1000
  const cutTimer = options.only === undefined ? setTimeout(() => cut.abort(), deadline + grace - Date.now()) : undefined
  const last = options.only !== undefined ? options.only + 1 : Number.MAX_SAFE_INTEGER
  const cursor = new Map(servers.map((s) => [s, options.only ?? 0]))
  const nextFor = (server: Server): number | undefined => {
    for (let i = cursor.get(server)!; i < last; i++) {
      if (order[i % order.length]!.server === server) {
        cursor.set(server, i + 1)
        return i
      }
    }
    cursor.set(server, last)
    return undefined
  }
  let sent = 0
  const worker = async (server: Server) => {
    for (;;) {
      if (sent >= (options.only !== undefined ? 1 : options.count) || Date.now() >= deadline) return
      const index = nextFor(server)
      if (index === undefined) return
      sent++
      const { op, tier, request } = drawRequest(setup, options.seed, index)
      const x = await run.send(op, request, tier)
      run.check(x, 'drawn', index, [replayStep(x, request)])
    }
  }
  const concurrency = options.concurrency ?? 12
  const perServer: Record<Server, number> = { gateway: concurrency, modelserver: Math.max(2, Math.ceil(concurrency / 3)) }
  await Promise.all(servers.flatMap((s) => Array.from({ length: perServer[s] }, () => worker(s))))
  clearTimeout(cutTimer)
}

/** Request `index`: operation and tier round-robin, the request by fast-check from seed ⊕ index. */
function drawRequest({ order, mcp, mcpArbitrary, arbitraries }: RunSetup, seed: number, index: number): { op: Operation; tier: Tier; request: FuzzRequest } {
  const op = order[index % order.length]!
  const tier = TIERS[Math.floor(index / order.length) % TIERS.length]!
  const arbitrary = op === mcp && mcpArbitrary && index % 2 === 0 ? mcpArbitrary : arbitraries.get(op)!
  return { op, tier, request: fc.sample(arbitrary, { seed: mix(seed, index), numRuns: 1 })[0]! }
}

/** After the run, both servers must still answer. */
async function checkServersAnswer(run: FuzzRun, servers: Server[], urls: FuzzOptions['urls']): Promise<void> {
  for (const server of servers) {
    const answer = await sendRequest(urls[server]!, { operation: '-', mutation: 'valid', method: 'GET', path: '/', headers: {} }, {}, { timeoutMs: 10_000 })
    const results = isAnswer(answer) ? [{ check: 'server_answers' as const }] : [{ check: 'server_answers' as const, problem: `the ${server} no longer answers after the run: ${answer.error}` }]
    const op = { server, id: '-', method: 'GET', path: '/', parameters: [], body: new Map(), bodyRequired: false, security: [], statuses: [], links: new Map() } satisfies Operation
    run.record({ op, tier: 'none', request: { operation: '-', mutation: 'valid', method: 'GET', path: '/', headers: {} }, answer }, results, 'after', 0, [])
  }
}

/** What is wrong with one response (the checks every response gets), as text: prototypeNames.ts and tests. */
export function responseProblems(server: Server, method: string, path: string, status: number, headers: Headers, text: string): string[] {
  return responseChecks({ server, method, path, status, headers, text, ms: 0 }, Number.POSITIVE_INFINITY)
    .filter((r) => r.problem !== undefined)
    .map((r) => `${r.check}: ${r.problem}`)
}
