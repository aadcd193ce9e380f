/**
 * The state of one fuzz run, shared by its phases (probes, drawn requests, stateful chains): it sends each
 * request with its tier's credentials, applies every check the exchange concerns, counts them, records the
 * violations (with the steps that reproduce them) and what the coverage report needs.
 */
import { documentRouter } from '../DocumentClient.js'
import type { Server } from '../types.js'
import { type CheckCounts, type CheckName, type CheckResult, emptyCounts } from './checks.js'
import { Coverage, type LinkRef } from './coverage.js'
import { Credentials, type Tier } from './Credentials.js'
import { inputChecks } from './inputChecks.js'
import { judgeRequest, type Judgement } from './judgeRequest.js'
import { type KnownFailure, matchKnownFailure } from './knownFailures.js'
import { mcpResultCheck, type McpTools } from './mcpChecks.js'
import type { LinkObject, Operation } from './operations.js'
import type { FuzzRequest } from './requestArbitrary.js'
import { responseChecks } from './responseChecks.js'
import { type Answer, isAnswer, type NoAnswer, sendRequest } from './sendRequest.js'

export type Phase = 'probe' | 'drawn' | 'stateful' | 'after'

/**
 * One request of a failure, as the replay sends it again (credentials are fetched anew for its tier), with what
 * its own checks need: the link it followed (chains), the probe it was (405, a left-out header).
 */
export type ReplayStep = {
  server: Server
  operation: string
  tier: Tier
  request: FuzzRequest
  link?: LinkObject
  probe?: { check: 'unsupported_method' | 'missing_required_header'; allowed?: string[]; header?: string }
}

export type Violation = {
  phase: Phase
  /** The drawn request's number (`--only`), or the position in its phase. */
  index: number
  check: CheckName
  server: Server
  operation: string
  tier: Tier
  mutation: string
  request: { method: string; path: string; headers: Record<string, string>; body?: string }
  status?: number
  problem: string
  response?: string
  known?: string
  /** The requests that led to it, the last one failing. */
  steps: ReplayStep[]
}

export type Exchange = { op: Operation; tier: Tier; request: FuzzRequest; answer: Answer | NoAnswer; judged?: Judgement }

const snippet = (s: string, n = 400) => (s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s)

export type FuzzRunOptions = {
  urls: Partial<Record<Server, string>>
  credentials: Credentials
  operations: Operation[]
  links: LinkRef[]
  mcpTools: McpTools
  errorSchema?: Record<string, unknown>
  knownFailures?: readonly KnownFailure[]
  requestTimeoutMs: number
  maxResponseMs: number
  cut: AbortSignal
}

export class FuzzRun {
  readonly counts: CheckCounts = emptyCounts()
  readonly violations: Violation[] = []
  readonly known: Violation[] = []
  readonly coverage: Coverage
  readonly byServer: Record<string, number> = {}
  readonly byStatus: Record<string, number> = {}
  readonly byOperation: Record<string, { requests: number; ms: number }> = {}
  requests = 0
  retried = 0
  cutOff = 0

  constructor(readonly options: FuzzRunOptions) {
    this.coverage = new Coverage(options.operations, options.links)
  }

  #loopback(server: Server): boolean {
    const host = new URL(this.options.urls[server]!).hostname.replace(/^\[|\]$/g, '')
    return host === 'localhost' || host === '::1' || /^127\./.test(host)
  }

  /** Sends one request with its tier's credentials; counts it; no checks yet. */
  async send(op: Operation, request: FuzzRequest, tier: Tier): Promise<Exchange> {
    // The tier's credentials replace a header of the same name the request drew (names are case-insensitive).
    const credentials = await this.options.credentials.headers(tier, request)
    const replaced = new Set(Object.keys(credentials).map((name) => name.toLowerCase()))
    const headers = { ...Object.fromEntries(Object.entries(request.headers).filter(([name]) => !replaced.has(name.toLowerCase()))), ...credentials }
    this.requests++
    this.byServer[op.server] = (this.byServer[op.server] ?? 0) + 1
    const answer = await sendRequest(this.options.urls[op.server]!, request, headers, { timeoutMs: this.options.requestTimeoutMs, cut: this.options.cut })
    const timing = (this.byOperation[`${op.server} ${op.id}`] ??= { requests: 0, ms: 0 })
    timing.requests++
    timing.ms += answer.ms
    if (answer.retried) this.retried++
    if (isAnswer(answer)) this.byStatus[answer.status] = (this.byStatus[answer.status] ?? 0) + 1
    return { op, tier, request: { ...request, headers }, answer }
  }

  /** Every check the exchange concerns (the request judged against the document first), recorded. */
  /**
   * `judge: false` for a request that is not the operation's (a probe with a method the path does not have):
   * only the response checks and `extra` apply, and the operation's coverage is left alone.
   */
  check(x: Exchange, phase: Phase, index: number, steps: ReplayStep[], extra: CheckResult[] = [], { judge = true } = {}): CheckResult[] {
    const { op, answer } = x
    if (!isAnswer(answer)) {
      if (answer.cut) {
        this.cutOff++
        return []
      }
      if (answer.refusedByClient) return []
      if (judge) this.coverage.response(op, undefined)
      const results: CheckResult[] = [{ check: 'server_answers', problem: `no answer: ${answer.error}` }]
      this.record(x, results, phase, index, steps)
      return results
    }
    if (judge) this.coverage.response(op, answer.status)
    // A path the URL parser folded (`..`), or that the server routes elsewhere (an empty segment dropped), is not
    // a request of this operation: only the response checks apply to it.
    const routed = documentRouter(op.server).matchOperation(x.request.method, answer.sentPath.split('?')[0]!) as { operationId?: string } | undefined
    const judged = judge && answer.sentPath === x.request.path && routed?.operationId === op.id ? (x.judged ?? judgeRequest(op, x.request)) : undefined
    if (judged) this.coverage.keywords(op, judged.reached, judged.broken)
    // The credentials are judged by the operation the server was asked for: `GET /agents/..` reaches the public
    // `GET /`, whose 200 says nothing about getAgent's security; a path no operation has is judged by none.
    const reached = routed?.operationId === op.id ? op : this.options.operations.find((o) => o.server === op.server && o.id === routed?.operationId)
    const results: CheckResult[] = [
      { check: 'server_answers' },
      ...responseChecks({ server: op.server, method: x.request.method, path: answer.sentPath, status: answer.status, headers: answer.headers, text: answer.text, ms: answer.ms }, this.options.maxResponseMs),
      ...(reached ? inputChecks({ op: reached, tier: x.tier, judged, status: answer.status, text: answer.text, loopback: this.#loopback(op.server) }) : []),
      ...extra,
    ]
    if (op.mcpTools && judge) {
      const mcp = mcpResultCheck(this.options.mcpTools, this.options.errorSchema, x.request.body && 'text' in x.request.body ? x.request.body.text : undefined, answer.text)
      if (mcp) results.push(mcp)
    }
    this.record(x, results, phase, index, steps)
    return results
  }

  record(x: Exchange, results: CheckResult[], phase: Phase, index: number, steps: ReplayStep[]): void {
    for (const r of results) {
      this.counts[r.check].checked++
      if (r.problem === undefined) continue
      this.counts[r.check].failed++
      const body = x.request.body && 'text' in x.request.body ? snippet(x.request.body.text, 300) : x.request.body ? '(multipart form)' : undefined
      const shownHeaders = Object.fromEntries(Object.entries(x.request.headers).map(([k, v]) => [k, /^(authorization|x-session-token|cookie)$/i.test(k) ? `(${x.tier} credential)` : v]))
      const v: Violation = {
        phase,
        index,
        check: r.check,
        server: x.op.server,
        operation: x.op.id,
        tier: x.tier,
        mutation: x.request.mutation,
        request: { method: x.request.method, path: x.request.path, headers: shownHeaders, body },
        ...(isAnswer(x.answer) ? { status: x.answer.status, response: snippet(x.answer.text) } : {}),
        problem: r.problem,
        steps,
      }
      const known = matchKnownFailure(this.options.knownFailures ?? [], v)
      if (known) this.known.push({ ...v, known: known.why })
      else this.violations.push(v)
    }
  }
}

/** A replay step without the credentials the tier added (they are fetched again when it is replayed). */
export function replayStep(x: Pick<Exchange, 'op' | 'tier'>, request: FuzzRequest, extra: Pick<ReplayStep, 'link' | 'probe'> = {}): ReplayStep {
  return { server: x.op.server, operation: x.op.id, tier: x.tier, request, ...extra }
}
