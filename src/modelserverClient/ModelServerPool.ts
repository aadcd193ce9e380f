import { Counter, Gauge, Registry } from 'prom-client'
import type { ChatChunk, ChatResponse, GenerateChunk, GenerateResponse, ModelSummary } from '../../generated/modelserver/types.gen.js'
import type { ModelServerModels } from '../../generated/gateway/types.gen.js'
import {
  type ChatInput,
  type GenerateInput,
  ModelServerClient,
  ModelServerConnectError,
  ModelServerUnavailableError,
  type UpstreamResponse,
} from './ModelServerClient.js'

/** One model server as the pool sees it (`/health/detailed`, `/metrics`). */
export type ModelServerState = {
  url: string
  /** `down` after a connection failure, until a refresh (or a call) reaches it again. */
  status: 'up' | 'down'
  /** From its `GET /api/tags` at the last refresh (`null`: never read). */
  models: string[] | null
  /** Calls the gateway has open on it now (a stream counts until it ends). */
  in_flight: number
  last_error: string | null
}

export type ModelServerPoolParameters = {
  /** One or more model servers (from `SERVICE_LLM__MODELSERVER__BASE_URL`, comma-separated). */
  baseUrls: readonly string[]
  timeoutMs: number
  /** How often the model lists (`/api/tags`, `/api/ps`) are read again (default 30 s); a miss also reads them. */
  refreshMs?: number | undefined
  fetch?: typeof fetch | undefined
  /** The model servers' API key (`SERVICE_LLM__MODELSERVER__API_KEY`). */
  apiKey?: string | undefined
}

type Member = {
  index: number
  client: ModelServerClient
  up: boolean
  /** Installed model names; `undefined` until read. */
  models: Set<string> | undefined
  inFlight: number
  lastError: string | null
}

/** Ollama's rule: a name without a tag is `:latest`. */
export function canonicalModelName(name: string): string {
  return name.includes(':') ? name : `${name}:latest`
}

/** Least busy first (the gateway's in-flight count per server), ties in rotation so an idle pool spreads too. */
function rank(members: Member[], start: number, total: number): Member[] {
  const turn = (m: Member) => (m.index - start + total) % total
  return [...members].sort((a, b) => a.inFlight - b.inFlight || turn(a) - turn(b))
}

/**
 * One or more model servers behind the gateway, used like one `ModelServerClient` (LiteLLM's router for
 * deployments, in small). Each call goes to a server that has the model — from its `/api/tags`, read at start,
 * every `refreshMs` and again on a miss — preferring the least busy. When a server cannot be reached before
 * any byte of its answer (refused, reset, closed), the call moves on to the next one and the server is marked
 * down; once an answer has started nothing is retried (a stream is never replayed). With one server the
 * call goes straight to it, as the plain client does (no model-list reads).
 */
export class ModelServerPool {
  private readonly members: Member[]
  private readonly refreshMs: number
  private rotation = 0
  private timer: NodeJS.Timeout | undefined
  private refreshing: Promise<void> | undefined
  private lastRefreshAt = 0
  /** `gateway_modelserver_*` gauges and the failover counter, served by `/metrics`. */
  readonly registry = new Registry()
  private readonly failovers = new Counter({
    name: 'gateway_modelserver_failovers_total',
    help: 'Calls moved on to another model server because this one could not be reached before its answer started.',
    labelNames: ['server'],
    registers: [this.registry],
  })

  constructor(p: ModelServerPoolParameters) {
    if (p.baseUrls.length === 0) throw new Error('ModelServerPool needs at least one base URL')
    this.refreshMs = p.refreshMs ?? 30_000
    this.members = p.baseUrls.map((baseUrl, index) => ({
      index,
      client: new ModelServerClient({ baseUrl, timeoutMs: p.timeoutMs, fetch: p.fetch, apiKey: p.apiKey }),
      up: true,
      models: undefined,
      inFlight: 0,
      lastError: null,
    }))
    const members = this.members
    const gauge = (name: string, help: string, value: (m: Member) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['server'],
        registers: [this.registry],
        collect() {
          for (const m of members) this.set({ server: m.client.baseUrl }, value(m))
        },
      })
    gauge('gateway_modelserver_up', 'Whether the gateway reaches this model server (1) or not (0).', (m) => (m.up ? 1 : 0))
    gauge('gateway_modelserver_in_flight', 'Calls the gateway has open on this model server.', (m) => m.inFlight)
    gauge('gateway_modelserver_models', 'Models installed on this model server (its /api/tags at the last refresh).', (m) => m.models?.size ?? 0)
  }

  /** The first configured server (a single-server gateway's address). */
  get baseUrl(): string {
    return this.members[0]!.client.baseUrl
  }

  get size(): number {
    return this.members.length
  }

  /** Reads the model lists now and then every `refreshMs` (only with more than one server). */
  start(): void {
    if (this.members.length < 2 || this.timer) return
    void this.refresh()
    this.timer = setInterval(() => void this.refresh(), this.refreshMs)
    this.timer.unref()
  }

  stop(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /** Reads every server's `/api/tags` (one refresh at a time; concurrent callers share it). */
  refresh(): Promise<void> {
    this.refreshing ??= Promise.all(this.members.map((m) => this.refreshMember(m))).then(() => {
      this.lastRefreshAt = performance.now()
      this.refreshing = undefined
    })
    return this.refreshing
  }

  private async refreshMember(m: Member): Promise<ModelSummary[] | undefined> {
    try {
      const models = await m.client.listModels()
      m.models = new Set(models.map((x) => canonicalModelName(x.name)))
      m.up = true
      m.lastError = null
      return models
    } catch (error) {
      this.markDown(m, error)
      return undefined
    }
  }

  private markDown(m: Member, error: unknown): void {
    m.up = false
    m.lastError = error instanceof ModelServerUnavailableError ? error.shortMessage : error instanceof Error ? error.message : String(error)
  }

  /** Each server's state, as `/health/detailed` reports it. */
  servers(): ModelServerState[] {
    return this.members.map((m) => ({
      url: m.client.baseUrl,
      status: m.up ? 'up' : 'down',
      models: m.models ? [...m.models].sort() : null,
      in_flight: m.inFlight,
      last_error: m.lastError,
    }))
  }

  /**
   * Health: every server's `/api/tags` read now (which also refreshes the routing). One server: `ok`/`down`
   * as before; several: `ok` when all answer, `partial` when some do, `down` when none does.
   */
  async check(): Promise<{ status: 'ok' | 'partial' | 'down'; detail?: string; servers: ModelServerState[] }> {
    await this.refresh()
    const servers = this.servers()
    const down = servers.filter((s) => s.status === 'down')
    const status = down.length === 0 ? 'ok' : down.length === servers.length ? 'down' : 'partial'
    return {
      status,
      ...(down.length > 0 ? { detail: down.map((s) => `${s.url}: ${s.last_error ?? 'down'}`).join('; ') } : {}),
      servers,
    }
  }

  /**
   * The order to try servers in for `model`: the servers known to have it (least busy first), then those whose
   * list is unknown, then those marked down that may be back. When no server is known to have it, the lists
   * are read again first (at most once a second); when still none has it, one server that is up is asked and
   * answers its own 404 (`model_not_found`); when all are down, all are tried.
   */
  private candidates(model: string | undefined): Member[] | Promise<Member[]> {
    if (this.members.length === 1) return this.members
    const wanted = model === undefined ? undefined : canonicalModelName(model)
    const known = () => this.members.filter((m) => m.up && (wanted === undefined || m.models?.has(wanted)))
    const holders = known()
    if (holders.length === 0 && wanted !== undefined && (this.refreshing || this.lastRefreshAt === 0 || performance.now() - this.lastRefreshAt > 1000))
      return this.refresh().then(() => this.order(wanted, known()))
    // Synchronous when nothing is read: the caller counts its call in before the next call is ranked.
    return this.order(wanted, holders)
  }

  private order(wanted: string | undefined, holders: Member[]): Member[] {
    const start = this.rotation++ % this.members.length
    const total = this.members.length
    const mayHave = (m: Member) => wanted === undefined || m.models === undefined || m.models.has(wanted)
    const unknown = this.members.filter((m) => m.up && m.models === undefined && !holders.includes(m))
    const down = this.members.filter((m) => !m.up && mayHave(m))
    const order = [...rank(holders, start, total), ...rank(unknown, start, total), ...rank(down, start, total)]
    if (order.length > 0) return order
    const up = this.members.filter((m) => m.up)
    return up.length > 0 ? rank(up, start, total).slice(0, 1) : this.members
  }

  /**
   * Runs `attempt` on the servers in routing order until one is reached: a connection failure before any byte
   * of the answer moves on to the next; anything else (an answer, a refusal, a timeout, the caller gone) is
   * final. `release` is called once the server's part is over (the caller's, for a stream).
   */
  private async route<T>(model: string | undefined, what: string, attempt: (client: ModelServerClient, release: () => void) => Promise<T>): Promise<T> {
    const found = this.candidates(model)
    const order = Array.isArray(found) ? found : await found
    const failures: string[] = []
    for (const m of order) {
      m.inFlight++
      let released = false
      const release = () => {
        if (!released) {
          released = true
          m.inFlight--
        }
      }
      try {
        const result = await attempt(m.client, release)
        m.up = true
        return result
      } catch (error) {
        release()
        if (!(error instanceof ModelServerConnectError) || this.members.length === 1) throw error
        this.markDown(m, error)
        this.failovers.inc({ server: m.client.baseUrl })
        failures.push(`${m.client.baseUrl}: ${m.lastError}`)
      }
    }
    throw new ModelServerUnavailableError('modelserver_unavailable', `no model server could take ${what}${model ? ` for ${model}` : ''} (${failures.join('; ')})`)
  }

  /** `route` for a whole answer: the server is released when it is read. */
  private whole<T>(model: string | undefined, what: string, run: (client: ModelServerClient) => Promise<T>): Promise<T> {
    return this.route(model, what, async (client, release) => {
      try {
        return await run(client)
      } finally {
        release()
      }
    })
  }

  /** `route` for a stream: the server is released when the caller's iteration ends (or it is cancelled). */
  private stream<T>(model: string | undefined, what: string, open: (client: ModelServerClient) => Promise<AsyncGenerator<T>>): Promise<AsyncGenerator<T>> {
    return this.route(model, what, async (client, release) => releasing(await open(client), release))
  }

  /** Runs `run` on the server chosen for `model`, and says which one it was (`POST /llm/test`). */
  async withServer<T>(model: string | undefined, run: (client: ModelServerClient) => Promise<T>): Promise<{ result: T; baseUrl: string }> {
    return this.whole(model, 'the call', async (client) => ({ result: await run(client), baseUrl: client.baseUrl }))
  }

  async open(what: string, request: { method: 'GET' | 'POST'; path: string; body?: unknown }, signal?: AbortSignal): Promise<UpstreamResponse> {
    const model = (request.body as { model?: unknown } | undefined)?.model
    return this.route(typeof model === 'string' ? model : undefined, what, async (client, release) => releasingUpstream(await client.open(what, request, signal), release))
  }

  /**
   * `open` on every server that is up (all of them when none is), for lists that are the union of the servers'
   * (`GET /v1/models`). A server that cannot be reached is marked down and left out; none reached throws
   * `modelserver_unavailable` naming each.
   */
  async openEach(what: string, request: { method: 'GET' | 'POST'; path: string }, signal?: AbortSignal): Promise<UpstreamResponse[]> {
    if (this.members.length === 1) return [await this.open(what, request, signal)]
    const up = this.members.filter((m) => m.up)
    const targets = up.length > 0 ? up : this.members
    const settled = await Promise.allSettled(targets.map((m) => m.client.open(what, request, signal)))
    const answers: UpstreamResponse[] = []
    const failures: string[] = []
    settled.forEach((result, i) => {
      const m = targets[i]!
      if (result.status === 'fulfilled') {
        m.up = true
        answers.push(result.value)
      } else if (result.reason instanceof ModelServerConnectError) {
        this.markDown(m, result.reason)
        failures.push(`${m.client.baseUrl}: ${m.lastError}`)
      } else {
        for (const answer of answers) answer.cancel()
        throw result.reason
      }
    })
    if (answers.length === 0) throw new ModelServerUnavailableError('modelserver_unavailable', `no model server could take ${what} (${failures.join('; ')})`)
    return answers
  }

  static text(upstream: UpstreamResponse): Promise<string> {
    return ModelServerClient.text(upstream)
  }

  chatStream(input: ChatInput, signal?: AbortSignal): Promise<AsyncGenerator<ChatChunk[]>> {
    return this.stream(input.model, 'POST /api/chat', (c) => c.chatStream(input, signal))
  }

  generateStream(input: GenerateInput, signal?: AbortSignal): Promise<AsyncGenerator<GenerateChunk[]>> {
    return this.stream(input.model, 'POST /api/generate', (c) => c.generateStream(input, signal))
  }

  generateStreamRaw(body: Record<string, unknown>, signal?: AbortSignal): Promise<UpstreamResponse> {
    const model = typeof body.model === 'string' ? body.model : undefined
    return this.route(model, 'POST /api/generate', async (client, release) => releasingUpstream(await client.generateStreamRaw(body, signal), release))
  }

  generate(input: GenerateInput, signal?: AbortSignal): Promise<GenerateResponse> {
    return this.whole(input.model, 'POST /api/generate', (c) => c.generate(input, signal))
  }

  chat(input: ChatInput, signal?: AbortSignal): Promise<ChatResponse> {
    return this.whole(input.model, 'POST /api/chat', (c) => c.chat(input, signal))
  }

  embed(input: { model: string; input: string }, signal?: AbortSignal): Promise<number[]> {
    return this.whole(input.model, 'POST /api/embed', (c) => c.embed(input, signal))
  }

  version(signal?: AbortSignal): Promise<string> {
    return this.whole(undefined, 'GET /api/version', (c) => c.version(signal))
  }

  listModels(signal?: AbortSignal): Promise<ModelSummary[]> {
    return this.whole(undefined, 'GET /api/tags', (c) => c.listModels(signal))
  }

  /**
   * The installed models (`GET /api/admin/modelserver/models`): one server's list as before; with several, the
   * union by name (first server that has each) and `base_url` the first configured server.
   */
  async installedModels(signal?: AbortSignal): Promise<ModelServerModels> {
    if (this.members.length === 1) return this.members[0]!.client.installedModels(signal)
    const lists = await Promise.all(this.members.map((m) => m.client.installedModels(signal).catch(() => undefined)))
    if (lists.every((l) => l === undefined)) return this.whole(undefined, 'GET /api/tags', (c) => c.installedModels(signal))
    const byName = new Map<string, ModelServerModels['models'][number]>()
    for (const list of lists) for (const model of list?.models ?? []) if (!byName.has(model.name)) byName.set(model.name, model)
    return { base_url: this.baseUrl, models: [...byName.values()] }
  }
}

/**
 * Passes a generator through, calling `release` once when it ends, fails or is closed — also when it is closed
 * before its first chunk (a plain `finally` in a generator would not run then). No extra generator per chunk.
 */
function releasing<T>(source: AsyncGenerator<T>, release: () => void): AsyncGenerator<T> {
  const wrapped: AsyncGenerator<T> = {
    async next() {
      try {
        const result = await source.next()
        if (result.done) release()
        return result
      } catch (error) {
        release()
        throw error
      }
    },
    async return(value) {
      release()
      return source.return(value as never)
    },
    async throw(error) {
      release()
      return source.throw(error)
    },
    [Symbol.asyncIterator]() {
      return wrapped
    },
  }
  return wrapped
}

function releasingUpstream(upstream: UpstreamResponse, release: () => void): UpstreamResponse {
  return {
    ...upstream,
    bytes: releasing(upstream.bytes, release),
    cancel: () => {
      release()
      upstream.cancel()
    },
  }
}
