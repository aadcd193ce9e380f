/**
 * The spec-driven fuzzer: requests for every operation of both documents (requestArbitrary.ts), under each
 * credential tier (none, a live wallet session, the overlord's bearer, garbage credentials), sent with a few
 * in flight. A response is a violation when it is a 5xx, has a status the document does not list for the
 * operation, does not match the document, or reveals a server path; a request that gets no answer (the
 * server went down or hung) is one too, and both servers must still answer at the end. Request `i` is drawn
 * from the seed and `i` alone (operation and tier round-robin, the request by fast-check from seed ⊕ i), so
 * `--seed` reproduces a run and `--only i` one request.
 */
import fc from 'fast-check'
import type { PrivateKeyAccount } from 'viem/accounts'
import { documentProblems, precompileDocument, repoRoot } from '../DocumentClient.js'
import { SeededRandom } from '../SeededRandom.js'
import type { Server } from '../types.js'
import { matchKnownFailure, type KnownFailure } from './knownFailures.js'
import { loadOperations, type Operation } from './operations.js'
import { type FuzzRequest, requestArbitrary } from './requestArbitrary.js'

export type Tier = 'none' | 'session' | 'bearer' | 'garbage'
export const TIERS: readonly Tier[] = ['none', 'session', 'bearer', 'garbage']

export type FuzzOptions = {
  urls: Partial<Record<Server, string>>
  seed: number
  /** At most this many requests. */
  count: number
  /** At most this long (seconds). */
  seconds: number
  concurrency?: number
  /** The shadow tier's overlord key: without it the bearer tier sends none. */
  overlord?: PrivateKeyAccount
  /** Only request number `i` (reproduce one violation). */
  only?: number
  /** Model-server defects owned by another change, reported apart (knownFailures.ts). */
  knownFailures?: readonly KnownFailure[]
  requestTimeoutMs?: number
}

export type Violation = {
  index: number
  server: Server
  operation: string
  tier: Tier
  mutation: string
  request: { method: string; path: string; headers: Record<string, string>; body?: string }
  status?: number
  problem: string
  response?: string
  known?: string
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
  violations: Violation[]
  known: Violation[]
  /** Requests still in flight when the run's time (plus a grace) was up: cut off, not counted as violations. */
  cutOff: number
  /** Requests sent again once because the server had closed their idle pooled connection. */
  retried: number
}

const CLOSED_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET'])

/** Absolute server paths in a body: the repository, temp and home directories, stack frames. */
const SERVER_PATH = new RegExp(`${repoRoot.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|(?:^|[\\s"'(=:])/(?:work|home|root|tmp|var|usr|opt|srv|app)/[\\w.@-]+/|node_modules/|\\bat [^\\n]*\\.[cm]?[jt]s:\\d+`)

/**
 * What is wrong with one response: a 5xx, a mismatch with the document, an error revealing a server path. The
 * one 5xx that is not the server's own failure is 502 Bad Gateway — a third party the request named (a model
 * registry) failed — and only where the document lists it for the operation (else the document check flags it).
 */
export function responseProblems(server: Server, method: string, path: string, status: number, headers: Headers, text: string): string[] {
  const problems: string[] = []
  if (status >= 500 && status !== 502) problems.push(`server error ${status}`)
  for (const p of documentProblems(server, method, path, status, headers, text)) problems.push(`document: ${p}`)
  const leak = status >= 400 ? SERVER_PATH.exec(text) : null
  if (leak) problems.push(`reveals a server path: ${JSON.stringify(leak[0])}`)
  return problems
}

/** Live credentials per tier, refreshed when they may have been spent (a fuzzed logout, a bearer's 300 s). */
export class Credentials {
  #session: Promise<string | undefined> | undefined
  #sessionUses = 0
  #bearer: { value: Promise<string | undefined>; at: number } | undefined
  readonly #random: SeededRandom

  constructor(
    private readonly gateway: string | undefined,
    private readonly overlord: PrivateKeyAccount | undefined,
    seed: number,
  ) {
    this.#random = new SeededRandom(seed, 'fuzz-credentials')
  }

  async #post(path: string, body: unknown): Promise<any> {
    // Bounded like every fuzz request: a gateway that stops answering must fail the run, not hang it.
    const res = await fetch(`${this.gateway}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    })
    return res.status === 200 ? res.json() : undefined
  }

  async #login(): Promise<string | undefined> {
    if (!this.gateway) return undefined
    const wallet = this.#random.account()
    const challenge = await this.#post('/users/challenge', { wallet: wallet.address })
    if (!challenge) return undefined
    const session = await this.#post('/users/register-with-signature', { wallet: wallet.address, challenge: challenge.challenge, signature: await wallet.signMessage({ message: challenge.challenge }) })
    return session?.session_token
  }

  async #verify(): Promise<string | undefined> {
    if (!this.gateway || !this.overlord) return undefined
    const challenge = await this.#post('/admin/shadow/challenge', { scope: 'auth' })
    if (!challenge) return undefined
    const verified = await this.#post('/admin/shadow/verify', { nonce: challenge.nonce, signature: await this.overlord.signMessage({ message: challenge.message }) })
    return verified?.jwt
  }

  async headers(tier: Tier, request: FuzzRequest): Promise<Record<string, string>> {
    switch (tier) {
      case 'none':
        return {}
      case 'garbage':
        return { 'x-session-token': `st_${'Z'.repeat(43)}`, authorization: 'Bearer eyJhbGciOiJub25lIn0.e30.', cookie: 'svc_session=garbage' }
      case 'session': {
        if (!this.#session || this.#sessionUses++ > 200 || /logout/.test(request.path)) {
          this.#session = this.#login()
          this.#sessionUses = 0
        }
        const token = await this.#session
        return token ? { 'x-session-token': token } : {}
      }
      case 'bearer': {
        if (!this.#bearer || Date.now() - this.#bearer.at > 240_000) this.#bearer = { value: this.#verify(), at: Date.now() }
        const jwt = await this.#bearer.value
        return jwt ? { authorization: `Bearer ${jwt}` } : {}
      }
    }
  }
}

function mix(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 0x9e3779b9, 0x85ebca6b)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0
  return (h ^ (h >>> 15)) | 0
}

const snippet = (s: string, n = 400) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s)

export async function fuzz(options: FuzzOptions): Promise<FuzzReport> {
  const servers = (['gateway', 'modelserver'] as const).filter((s) => options.urls[s])
  const operations: Operation[] = []
  for (const server of servers) operations.push(...(await loadOperations(server)))
  if (operations.length === 0) throw new Error('no operations: give a gateway and/or a model server URL')
  const order = fc.sample(fc.shuffledSubarray(operations, { minLength: operations.length, maxLength: operations.length }), { seed: options.seed, numRuns: 1 })[0]!
  // Everything a request needs is built before the first one (the arbitrary of every operation, every response
  // schema compiled): compiling in the middle of the run blocks the event loop for seconds on a loaded machine.
  const arbitraries = new Map<Operation, fc.Arbitrary<FuzzRequest>>(operations.map((op) => [op, requestArbitrary(op)]))
  for (const server of servers) precompileDocument(server)
  const credentials = new Credentials(options.urls.gateway, options.overlord, options.seed)
  const draw = (index: number) => {
    const op = order[index % order.length]!
    const tier = TIERS[Math.floor(index / order.length) % TIERS.length]!
    let arbitrary = arbitraries.get(op)
    if (!arbitrary) arbitraries.set(op, (arbitrary = requestArbitrary(op)))
    return { op, tier, request: fc.sample(arbitrary, { seed: mix(options.seed, index), numRuns: 1 })[0]! }
  }
  const report: FuzzReport = { seed: options.seed, requests: 0, seconds: 0, operations: operations.length, byServer: {}, byStatus: {}, byOperation: {}, violations: [], known: [], cutOff: 0, retried: 0 }
  const started = Date.now()
  const deadline = started + options.seconds * 1000
  const last = options.only !== undefined ? options.only + 1 : Number.MAX_SAFE_INTEGER
  // The run is bounded in time: no request starts after the deadline, and one still in flight a grace later
  // (an inference queued behind others) is cut off, so `--seconds` bounds the wall time, not only the start.
  const cut = new AbortController()
  const grace = Math.min(15, Math.max(2, options.seconds / 10)) * 1000
  const cutTimer = options.only === undefined ? setTimeout(() => cut.abort(), deadline + grace - Date.now()) : undefined

  const record = (v: Violation) => {
    const known = matchKnownFailure(options.knownFailures ?? [], v)
    if (known) report.known.push({ ...v, known: known.why })
    else report.violations.push(v)
  }

  const one = async (index: number) => {
    const { op, tier, request } = draw(index)
    const base = options.urls[op.server]!.replace(/\/+$/, '')
    const headers = { ...request.headers, ...(await credentials.headers(tier, request)) }
    let body: string | FormData | undefined
    if (request.body && 'text' in request.body) body = request.body.text
    else if (request.body) {
      const form = new FormData()
      for (const p of request.body.parts) {
        if (p.filename !== undefined) form.append(p.name, new Blob([p.value]), p.filename)
        else form.append(p.name, p.value)
      }
      body = form
    }
    const shown = { method: request.method, path: request.path, headers, body: typeof body === 'string' ? snippet(body, 300) : body ? '(multipart form)' : undefined }
    const v = { index, server: op.server, operation: op.id, tier, mutation: request.mutation, request: shown }
    report.requests++
    report.byServer[op.server] = (report.byServer[op.server] ?? 0) + 1
    let res: Response
    let text: string
    const t0 = Date.now()
    const timing = (report.byOperation[`${op.server} ${op.id}`] ??= { requests: 0, ms: 0 })
    timing.requests++
    try {
      const send = async () => {
        const signal = AbortSignal.any([AbortSignal.timeout(options.requestTimeoutMs ?? 60_000), cut.signal])
        const r = await fetch(`${base}${request.path}`, { method: request.method, headers, body, redirect: 'manual', signal })
        return { r, t: await r.text() }
      }
      let answer
      try {
        answer = await send()
      } catch (error) {
        // A pooled keep-alive connection the server closed as idle just as this request went out: what every
        // HTTP client retries once on a new connection. A server that went down fails the retry too.
        if (cut.signal.aborted || !CLOSED_CONNECTION.has((error as { cause?: { code?: string } }).cause?.code ?? '')) throw error
        report.retried++
        answer = await send()
      }
      res = answer.r
      text = answer.t
      timing.ms += Date.now() - t0
    } catch (error) {
      timing.ms += Date.now() - t0
      if (cut.signal.aborted) {
        report.cutOff++
        return
      }
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message
      // fetch refuses some requests before sending them (a header value it cannot encode): not the server's doing
      if (error instanceof TypeError && !/fetch failed/.test(error.message)) return
      record({ ...v, problem: `no answer: ${cause}` })
      return
    }
    report.byStatus[res.status] = (report.byStatus[res.status] ?? 0) + 1
    // What the server saw: the URL parser folds `..` and `.` segments before sending.
    const sent = new URL(`${base}${request.path}`)
    const sentPath = `${sent.pathname}${sent.search}`
    const answer = { status: res.status, response: snippet(text) }
    for (const problem of responseProblems(op.server, request.method, sentPath, res.status, res.headers, text)) record({ ...v, ...answer, problem })
  }

  // One pool of workers per server, so a slow one (inference) does not starve the other; each pool takes
  // the next index whose operation is on its server. Index i's request depends on the seed and i only.
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
      await one(index)
    }
  }
  const concurrency = options.concurrency ?? 12
  const perServer: Record<Server, number> = { gateway: concurrency, modelserver: Math.max(2, Math.ceil(concurrency / 3)) }
  await Promise.all(servers.flatMap((s) => Array.from({ length: perServer[s] }, () => worker(s))))
  clearTimeout(cutTimer)
  for (const server of servers) {
    try {
      await fetch(`${options.urls[server]!.replace(/\/+$/, '')}/`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.arrayBuffer())
    } catch (error) {
      report.violations.push({ index: -1, server, operation: '-', tier: 'none', mutation: '-', request: { method: 'GET', path: '/', headers: {} }, problem: `the ${server} no longer answers after the run: ${(error as Error).message}` })
    }
  }
  report.seconds = Math.round((Date.now() - started) / 100) / 10
  return report
}
