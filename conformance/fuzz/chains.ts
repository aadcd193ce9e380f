/**
 * The stateful phase: chains of calls along the documents' OpenAPI links. A chain starts at an operation whose
 * responses have links (a valid drawn request, or a seeded one: a signed login, a paid upload, a pull from a
 * registry the server allows); for the status it got, each link is followed — the target's request drawn valid,
 * with the link's `parameters` and `requestBody` evaluated against the exchange (runtime expressions) — and so
 * on, four links deep, from answers that succeeded only (a 2xx; a stream not ended by an `{error}` line). Each
 * step gets every check, plus:
 * - ensure_resource_availability: a link from a 2xx answer does not lead to 404 or 410;
 * - use_after_free: a link from a successful DELETE (or one marked `x-use-after-free`, e.g. a logout's) leads
 *   to 404 or 410 (401 for the credential the step revoked).
 * A link the exchange cannot fill (an expression with no value: a queued upload has no Arweave id yet) is not
 * followed; one whose target the document lacks is reported by the coverage.
 */
import fc from 'fast-check'
import type { CheckResult } from './checks.js'
import { documentedStatus, type LinkRef } from './coverage.js'
import type { Tier } from './Credentials.js'
import { type Exchange, type FuzzRun, replayStep, type ReplayStep } from './FuzzRun.js'
import { tierSatisfies } from './inputChecks.js'
import type { LinkObject, Operation } from './operations.js'
import { type Draft, draftArbitrary, type FuzzRequest, renderDraft } from './requestArbitrary.js'
import { evaluate, type ExchangeValues } from './runtimeExpressions.js'
import { isAnswer } from './sendRequest.js'

const MAX_DEPTH = 4
const CREDENTIAL_HEADERS = /^(authorization|x-session-token|x-api-key|cookie)$/i

/** A request the chain builds from what the fuzzer holds (a wallet's key, the overlord's, a payer). */
export type Completer = (request: FuzzRequest, source: Exchange) => Promise<FuzzRequest>
export type ChainRoot = { op: Operation; tier: Tier; request: FuzzRequest; label: string }

export type ChainContext = {
  run: FuzzRun
  operations: Operation[]
  seed: number
  /** By `<server> <operationId>` of the link's target. */
  completers: Map<string, Completer>
}

/** Every link of the documents, for the coverage report. */
export function documentedLinks(operations: Operation[]): LinkRef[] {
  const refs: LinkRef[] = []
  for (const op of operations) {
    for (const [status, links] of op.links) for (const [name, link] of links) refs.push({ server: op.server, operation: op.id, status, name, target: link.operationId ?? link.operationRef ?? '?' })
  }
  return refs
}

/** The tier a step takes: the source's when the target accepts it, else one the target accepts. */
export function tierFor(op: Pick<Operation, 'security'>, preferred: Tier): Tier {
  if (tierSatisfies(op, preferred)) return preferred
  return (['none', 'session', 'bearer'] as const).find((t) => tierSatisfies(op, t)) ?? preferred
}

function exchangeValues(x: Exchange): ExchangeValues | undefined {
  if (!isAnswer(x.answer)) return undefined
  const [rawPath, rawQuery = ''] = x.request.path.split('?', 2) as [string, string?]
  const path: Record<string, string> = {}
  const names: string[] = []
  const template = new RegExp(`^${x.op.path.split(/\{([^}]+)\}/).map((part, i) => (i % 2 ? (names.push(part), '([^/]*)') : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`)
  const m = template.exec(rawPath)
  names.forEach((name, i) => {
    try {
      path[name] = decodeURIComponent(m?.[i + 1] ?? '')
    } catch {
      path[name] = m?.[i + 1] ?? ''
    }
  })
  const parse = (text: string | undefined) => {
    try {
      return text === undefined ? undefined : (JSON.parse(text) as unknown)
    } catch {
      return text
    }
  }
  return {
    url: x.request.path,
    method: x.request.method,
    status: x.answer.status,
    request: { path, query: new URLSearchParams(rawQuery), headers: x.request.headers, body: x.request.body && 'text' in x.request.body ? parse(x.request.body.text) : undefined },
    response: { headers: x.answer.headers, body: parse(x.answer.text) },
  }
}

/** The link target's request: drawn valid, then the link's values put in. Undefined when a value is missing. */
function linkedRequest(target: Operation, link: LinkObject, values: ExchangeValues, seed: number): { request: FuzzRequest; credentialsFromLink: boolean } | undefined {
  const draft: Draft = fc.sample(draftArbitrary(target), { seed, numRuns: 1 })[0]!
  let credentialsFromLink = false
  for (const [key, expression] of Object.entries(link.parameters ?? {})) {
    const value = evaluate(expression, values)
    if (value === undefined || value === '') return undefined
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    const qualified = /^(path|query|header)\.(.+)$/.exec(key)
    const where = (qualified?.[1] ?? target.parameters.find((p) => p.name === key)?.in ?? 'query') as 'path' | 'query' | 'header' | 'cookie'
    const name = qualified?.[2] ?? key
    if (where === 'path') draft.path[name] = text
    else if (where === 'header') {
      draft.headers[name] = text
      if (CREDENTIAL_HEADERS.test(name)) credentialsFromLink = true
    } else draft.query[name] = text
  }
  if (link.requestBody !== undefined) {
    const body = evaluate(link.requestBody, values)
    if (body === undefined || (body && typeof body === 'object' && Object.values(body).some((v) => v === undefined))) return undefined
    draft.body = body
    draft.mediaType = [...target.body.keys()].find((t) => t.includes('json')) ?? draft.mediaType
  }
  return { request: { ...renderDraft(target, draft), mutation: 'valid' }, credentialsFromLink }
}

/** A 2xx that did what it was asked: a stream (NDJSON) whose last line is an `{error}` did not. */
export function succeeded(x: Exchange): boolean {
  if (!isAnswer(x.answer) || x.answer.status < 200 || x.answer.status >= 300) return false
  if (!/ndjson/.test(x.answer.headers.get('content-type') ?? '')) return true
  const last = x.answer.text.trim().split('\n').at(-1) ?? ''
  try {
    return !Object.hasOwn(JSON.parse(last) as object, 'error')
  } catch {
    return false
  }
}

/** The chain's own checks of a followed link (replay.ts runs them again). */
export function linkChecks(source: Exchange, link: LinkObject, next: Exchange): CheckResult[] {
  if (!isAnswer(source.answer) || !isAnswer(next.answer) || !succeeded(source)) return []
  const status = next.answer.status
  const freed = source.request.method === 'DELETE' || link['x-use-after-free'] === true
  if (freed) {
    const gone = status === 404 || status === 410 || (link['x-use-after-free'] === true && status === 401)
    return [gone ? { check: 'use_after_free' } : { check: 'use_after_free', problem: `after ${source.request.method} ${source.request.path} → ${source.answer.status}, ${next.request.method} ${next.request.path} still answers ${status}` }]
  }
  const missing = status === 404 || status === 410
  return [missing ? { check: 'ensure_resource_availability', problem: `${source.request.method} ${source.request.path} → ${source.answer.status} named it, but ${next.request.method} ${next.request.path} answers ${status}` } : { check: 'ensure_resource_availability' }]
}

/** What each root gave: how often it ran, the statuses it got, the steps its chains took. */
export type ChainStats = Record<string, { runs: number; statuses: Record<string, number>; steps: number }>

export class Chains {
  #counter = 0
  readonly #byId: Map<string, Operation>
  readonly stats: ChainStats = {}

  constructor(private readonly ctx: ChainContext) {
    this.#byId = new Map(ctx.operations.map((op) => [`${op.server} ${op.id}`, op]))
  }

  /** One chain from `root` (its exchange is checked like any other). */
  async run(root: ChainRoot): Promise<void> {
    const x = await this.ctx.run.send(root.op, root.request, root.tier)
    const steps = [replayStep(x, root.request)]
    this.ctx.run.check(x, 'stateful', this.#counter++, steps)
    const stats = (this.stats[root.label] ??= { runs: 0, statuses: {}, steps: 0 })
    stats.runs++
    const status = isAnswer(x.answer) ? String(x.answer.status) : 'no answer'
    stats.statuses[status] = (stats.statuses[status] ?? 0) + 1
    stats.steps += 1 + (await this.#follow(x, steps, 1))
  }

  /** Follows the links of `source`'s answer; returns the steps taken. */
  async #follow(source: Exchange, steps: ReplayStep[], depth: number): Promise<number> {
    // A link says what follows a success: a refused or failed call (a pull whose stream ended in an error) has
    // nothing to follow — following it anyway would act on what the call did not make (delete a model it named).
    if (depth > MAX_DEPTH || !succeeded(source) || !isAnswer(source.answer)) return 0
    const status = documentedStatus([...source.op.links.keys()], source.answer.status)
    const links = status ? source.op.links.get(status) : undefined
    const values = exchangeValues(source)
    if (!links || !values) return 0
    let taken = 0
    for (const [name, link] of links) {
      const target = link.operationId ? this.#byId.get(`${source.op.server} ${link.operationId}`) : undefined
      if (!target) continue
      const built = linkedRequest(target, link, values, this.ctx.seed + this.#counter)
      if (!built) continue
      this.ctx.run.coverage.link({ server: source.op.server, operation: source.op.id, status: status!, name, target: target.id })
      const completer = this.ctx.completers.get(`${target.server} ${target.id}`)
      const request = completer ? await completer(built.request, source) : built.request
      const tier = built.credentialsFromLink ? 'link' : tierFor(target, source.tier === 'link' ? 'session' : source.tier)
      const next = await this.ctx.run.send(target, request, tier)
      const chainSteps = [...steps, replayStep(next, request, { link })]
      this.ctx.run.check(next, 'stateful', this.#counter++, chainSteps, linkChecks(source, link, next))
      taken += 1 + (await this.#follow(next, chainSteps, depth + 1))
    }
    return taken
  }
}
