import { type ClientRequest, Agent as HttpAgent, type IncomingMessage, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequestFn } from 'node:https'
import { urlToHttpOptions } from 'node:url'
import { createClient } from '../../generated/modelserver/client/index.js'
import { embed, getVersion, listModels } from '../../generated/modelserver/sdk.gen.js'
import type { ChatChunk, ChatMessage, ChatResponse, GenerateChunk, GenerateResponse, ModelOptions, ModelSummary } from '../../generated/modelserver/types.gen.js'
import type { ModelServerModels } from '../../generated/gateway/types.gen.js'
import { BaseError } from '../shared/errors/BaseError.js'
import { clientSpan } from '../shared/tracing/clientSpan.js'
import { NdjsonLineError, readNdjsonBatches } from './readNdjsonBatches.js'

function isoOrRaw(value: string): string {
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? value : date.toISOString()
}

export class ModelServerUnavailableError extends BaseError<'modelserver_unavailable'> {
  override name = 'ModelServerUnavailableError'
}

/**
 * The model server could not be reached (refused, reset, closed before answering): nothing of the answer
 * arrived, so another model server can take the call (`ModelServerPool` fails over on this one only — not on a
 * timeout, which may mean a busy server still generating, nor on the caller going away).
 */
export class ModelServerConnectError extends ModelServerUnavailableError {
  override name = 'ModelServerConnectError'
}

/** The model server refused the request itself (unknown model, bad option): the caller's mistake, a 400. */
export class ModelRequestError extends BaseError<'model_not_found' | 'model_request_invalid'> {
  override name = 'ModelRequestError'
}

export type ModelServerClientParameters = {
  baseUrl: string
  /** Longest wait for the answer's headers, for its first chunk and for each next chunk (not the whole answer). */
  timeoutMs: number
  /** `fetch` for the small JSON calls made through the generated SDK (tags, version, embed); streams use node:http. */
  fetch?: typeof fetch
  /** The model server's API key (`MODELSERVER_API_KEYS` there), sent as `Authorization: Bearer` on every call. */
  apiKey?: string | undefined
}

/** A model-server answer whose body is read chunk by chunk as the model server sends it. */
export type UpstreamResponse = {
  /** The model server that answered. */
  baseUrl: string
  status: number
  contentType: string
  /**
   * The body as it arrives; each wait is bounded by the client's timeout (then `modelserver_unavailable`).
   * Ending the iteration early, or `cancel()`, closes the connection — the model server stops generating.
   */
  bytes: AsyncGenerator<Uint8Array>
  cancel(): void
}

export type ChatInput = { model: string; messages: ChatMessage[]; options?: ModelOptions | undefined }
export type GenerateInput = { model: string; prompt: string; system?: string | undefined; options?: ModelOptions | undefined }

/**
 * The model server as the gateway uses it, through the SDK generated from `openapi/modelserver.yaml`.
 * A request the model server refuses (404 unknown model, 400 bad option) is the caller's mistake:
 * `model_not_found` / `model_request_invalid` (400). Any other failure — connection refused, timeout, a 5xx,
 * a body that is not what the document says — becomes `modelserver_unavailable` (502 at the gateway).
 */
export class ModelServerClient {
  readonly baseUrl: string
  private readonly client: ReturnType<typeof createClient>
  private readonly authorization: { authorization?: string }
  private readonly timeoutMs: number
  private readonly transport: { request: typeof httpRequest }
  private readonly agent: HttpAgent
  /** The base URL as node:http request options, parsed once (a URL string is parsed again on every request). */
  private readonly target: { protocol: string; hostname: string; port?: number | string; auth?: string }
  /** The base URL's path, without a trailing slash: every request path goes under it. */
  private readonly pathPrefix: string

  constructor({ baseUrl, timeoutMs, fetch: fetchImpl, apiKey }: ModelServerClientParameters) {
    this.baseUrl = baseUrl
    this.timeoutMs = timeoutMs
    this.authorization = apiKey ? { authorization: `Bearer ${apiKey}` } : {}
    this.client = createClient({ baseUrl, headers: this.authorization, ...(fetchImpl ? { fetch: fetchImpl } : {}) })
    // urlToHttpOptions: what node:http makes of a URL string itself (IPv6 brackets removed, credentials decoded).
    const { pathname, path: _path, href: _href, search: _search, hash: _hash, ...target } = urlToHttpOptions(new URL(baseUrl)) as Record<string, string | number | undefined>
    this.target = target as { protocol: string; hostname: string }
    this.pathPrefix = String(pathname ?? '/').replace(/\/+$/, '')
    const https = baseUrl.startsWith('https:')
    this.transport = https ? httpsRequest : { request: httpRequest }
    // Connections to the model server are reused across calls (no connect per call); Node's client sockets
    // have Nagle off by default. LIFO keeps the fewest connections warm.
    this.agent = new (https ? HttpsAgent : HttpAgent)({ keepAlive: true, maxSockets: 256, scheduling: 'lifo' })
  }

  private unavailable(what: string, reason: string, cause?: unknown): ModelServerUnavailableError {
    return new ModelServerUnavailableError('modelserver_unavailable', `model server at ${this.baseUrl} ${what}: ${reason}`, { cause })
  }

  /**
   * Sends a request and hands back the answer as soon as its headers arrive. One idle timer bounds every wait
   * (headers, first chunk, each next chunk) and is refreshed by each chunk, so a long generation that keeps
   * producing never times out, and a model server that stalls is given up after `timeoutMs`. The caller's
   * `signal` (the client went away) aborts the request at once.
   *
   * This is the streaming path, so it is node:http on a keep-alive agent rather than `fetch`: no connection
   * set-up per call, Nagle off, and the body read as Node buffers without a WHATWG stream per chunk (measured
   * by `npm run bench -- llm`). A request that fails on a reused keep-alive connection the model server had just
   * closed (ECONNRESET before any answer) is sent once more on a fresh one, as the Node documentation advises.
   */
  async open(what: string, request: { method: 'GET' | 'POST'; path: string; body?: unknown }, signal?: AbortSignal): Promise<UpstreamResponse> {
    let timedOut = false
    // Cutting the call: the request in flight is destroyed (the connection closes, so the model server stops
    // generating) and a retry is not sent. A flag and the request itself rather than an AbortController: this runs
    // before every model call's first byte, and the signals of node's EventTarget are costly to make and to follow.
    let cut = false
    let current: ClientRequest | undefined
    const abort = () => {
      cut = true
      current?.destroy()
    }
    const timer = setTimeout(() => {
      timedOut = true
      abort()
    }, this.timeoutMs)
    if (signal?.aborted) abort()
    else signal?.addEventListener('abort', abort, { once: true })
    let finished = false
    let complete = false
    // The call's span in the request's trace (the model server joins it through `traceparent`): until the body ends.
    const span = clientSpan(`${request.method} ${request.path}`, request.method, `${this.baseUrl}${request.path}`)
    const finish = (error?: unknown) => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', abort)
      // An answer read to its end leaves its connection to the agent (kept alive); any other end closes it,
      // which is what stops the model server generating.
      if (!complete) abort()
      span.end(error)
    }
    const fail = (error: unknown) =>
      this.unavailable(what, timedOut ? `no data within ${this.timeoutMs} ms` : describe(error), error)
    const payload = request.body === undefined ? undefined : JSON.stringify(request.body)
    const attempt = () =>
      this.send(request, payload, span.headers, (req) => {
        current = req
        if (cut) req.destroy()
      })
    let response: IncomingMessage
    try {
      response = await attempt().catch((error: { code?: string; reusedSocket?: boolean }) => {
        if (error?.reusedSocket && error.code === 'ECONNRESET' && !cut) return attempt()
        throw error
      })
    } catch (error) {
      finish(error)
      if (!timedOut && !signal?.aborted) throw new ModelServerConnectError('modelserver_unavailable', `model server at ${this.baseUrl} ${what}: ${describe(error)}`, { cause: error })
      throw fail(error)
    }
    timer.refresh()
    span.status(response.statusCode ?? 0)
    const iterator = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>
    async function* bytes(): AsyncGenerator<Uint8Array> {
      try {
        for (;;) {
          let read: IteratorResult<Buffer>
          try {
            read = await iterator.next()
          } catch (error) {
            const failure = fail(error)
            finish(failure)
            throw failure
          }
          if (read.done) {
            complete = response.complete
            return
          }
          timer.refresh()
          yield read.value
        }
      } finally {
        finish()
      }
    }
    const contentType = response.headers['content-type'] ?? ''
    return { baseUrl: this.baseUrl, status: response.statusCode ?? 0, contentType, bytes: bytes(), cancel: finish }
  }

  /**
   * One HTTP request on the keep-alive agent; resolves with the answer once its headers are in. `created` gets
   * the request before it is sent, so the caller can cut it (`destroy`: the connection closes without an error
   * event of its own — node:http's `signal` option would destroy with an AbortError that can surface as uncaught
   * once the answer is half read; the reader then sees the cut connection, and the caller knows why).
   */
  private send(request: { method: 'GET' | 'POST'; path: string }, payload: string | undefined, traceHeaders: Record<string, string>, created: (req: ClientRequest) => void): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.transport.request(
        {
          ...this.target,
          path: `${this.pathPrefix}${request.path}`,
          method: request.method,
          agent: this.agent,
          headers: { ...this.authorization, ...traceHeaders, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
        },
        resolve,
      )
      // Errors after the answer started (a cut, a broken connection) reach the reader through the body's
      // iterator; the listeners keep them from being unhandled when nobody reads (a stream closed early).
      req.on('error', (error: Error & { reusedSocket?: boolean }) => {
        error.reusedSocket = req.reusedSocket
        reject(error)
      })
      req.on('response', (response) => response.on('error', () => {}))
      created(req)
      req.end(payload)
    })
  }

  /** Reads a whole (small) answer body as text, within the idle timeout. */
  static async text(upstream: UpstreamResponse): Promise<string> {
    const decoder = new TextDecoder()
    let text = ''
    for await (const chunk of upstream.bytes) text += decoder.decode(chunk, { stream: true })
    return text + decoder.decode()
  }

  /** `open` for an NDJSON operation: a refusal (404, 400) or failure status becomes the matching error. */
  private async openNdjson(what: string, path: string, body: unknown, signal?: AbortSignal): Promise<UpstreamResponse> {
    const upstream = await this.open(what, { method: 'POST', path, body }, signal)
    if (upstream.status === 200) return upstream
    let message: unknown
    try {
      message = (JSON.parse(await ModelServerClient.text(upstream)) as { error?: unknown }).error
    } catch {
      message = undefined
    } finally {
      upstream.cancel()
    }
    throw this.refusal(what, upstream.status, message)
  }

  private refusal(what: string, status: number | undefined, message: unknown): BaseError {
    if (status === 404) return new ModelRequestError('model_not_found', typeof message === 'string' ? message : `model not found on the model server`)
    if (status === 400) return new ModelRequestError('model_request_invalid', `model server rejected the request${typeof message === 'string' ? `: ${message}` : ''}`)
    return new ModelServerUnavailableError(
      'modelserver_unavailable',
      `model server at ${this.baseUrl} answered ${status ?? 'an error'} to ${what}${typeof message === 'string' ? `: ${message}` : ''}`,
    )
  }

  /** The chunks of an open NDJSON stream in batches (one per read); an `{error}` line becomes `modelserver_unavailable`. */
  private async *chunks<T extends { done: boolean }>(what: string, upstream: UpstreamResponse, valid: (chunk: unknown) => chunk is T): AsyncGenerator<T[]> {
    try {
      for await (const batch of readNdjsonBatches(upstream.bytes)) {
        for (const chunk of batch) {
          const error = (chunk as { error?: unknown } | null)?.error
          if (error !== undefined) throw this.unavailable(what, `failed mid-stream: ${String(error)}`)
          if (!valid(chunk)) throw this.unavailable(what, 'sent a chunk that is not what its document says')
        }
        yield batch as T[]
      }
    } catch (error) {
      if (error instanceof NdjsonLineError) throw this.unavailable(what, error.message, error)
      throw error
    } finally {
      upstream.cancel()
    }
  }

  /** A streamed `/api/chat` (opened: refusals are thrown here, before any chunk). */
  async chatStream(input: ChatInput, signal?: AbortSignal): Promise<AsyncGenerator<ChatChunk[]>> {
    const upstream = await this.openNdjson('POST /api/chat', '/api/chat', { ...input, stream: true }, signal)
    return this.chunks('POST /api/chat', upstream, isChatChunk)
  }

  /**
   * `/api/generate` with a caller's body passed on as is (Ollama's fields), streamed: the raw NDJSON bytes as
   * the model server sends them (refusals are thrown here, before any byte).
   */
  async generateStreamRaw(body: Record<string, unknown>, signal?: AbortSignal): Promise<UpstreamResponse> {
    return this.openNdjson('POST /api/generate', '/api/generate', { ...body, stream: true }, signal)
  }

  /** A streamed `/api/generate` (opened: refusals are thrown here, before any chunk). */
  async generateStream(input: GenerateInput, signal?: AbortSignal): Promise<AsyncGenerator<GenerateChunk[]>> {
    const upstream = await this.openNdjson('POST /api/generate', '/api/generate', { ...input, stream: true }, signal)
    return this.chunks('POST /api/generate', upstream, isGenerateChunk)
  }

  private async call<T>(what: string, run: (signal: AbortSignal) => Promise<{ data?: T; error?: unknown; response?: Response }>, signal?: AbortSignal): Promise<T> {
    const timeout = AbortSignal.timeout(this.timeoutMs)
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
    let result: { data?: T; error?: unknown; response?: Response }
    try {
      result = await run(combined)
      // The generated client hands back a failed fetch (refused, reset, timed out) as an error without a response.
      if (result.response === undefined && result.error instanceof Error) throw result.error
    } catch (error) {
      const reason = timeout.aborted ? `timed out after ${this.timeoutMs} ms` : describe(error)
      const Kind = timeout.aborted || signal?.aborted ? ModelServerUnavailableError : ModelServerConnectError
      throw new Kind('modelserver_unavailable', `model server at ${this.baseUrl} ${what}: ${reason}`, { cause: error })
    }
    if (result.error !== undefined || result.data === undefined) {
      const status = result.response?.status
      const message = (result.error as { error?: unknown } | undefined)?.error
      if (status === 404) throw new ModelRequestError('model_not_found', typeof message === 'string' ? message : `model not found on the model server`)
      if (status === 400) throw new ModelRequestError('model_request_invalid', `model server rejected the request${typeof message === 'string' ? `: ${message}` : ''}`)
      throw new ModelServerUnavailableError(
        'modelserver_unavailable',
        `model server at ${this.baseUrl} answered ${status ?? 'an error'} to ${what}${typeof message === 'string' ? `: ${message}` : ''}`,
      )
    }
    return result.data
  }

  async version(signal?: AbortSignal): Promise<string> {
    const data = await this.call('GET /api/version', (s) => getVersion({ client: this.client, signal: s }), signal)
    return data.version
  }

  async listModels(signal?: AbortSignal): Promise<ModelSummary[]> {
    const data = await this.call('GET /api/tags', (s) => listModels({ client: this.client, signal: s }), signal)
    return data.models
  }

  /**
   * The installed models as the gateway documents them (`ModelServerModels`): the model server's base URL,
   * and per model an ISO `modified_at` (kept as sent when unparsable), a `sha256:`-prefixed digest and
   * `details` always an object.
   */
  async installedModels(signal?: AbortSignal): Promise<ModelServerModels> {
    const models = await this.listModels(signal)
    return {
      base_url: this.baseUrl,
      models: models.map((m) => ({
        name: m.name,
        model: m.model,
        modified_at: isoOrRaw(m.modified_at),
        size: m.size,
        digest: m.digest.startsWith('sha256:') ? m.digest : `sha256:${m.digest}`,
        details: m.details ?? {},
      })),
    }
  }

  /**
   * A whole completion. Read as a stream and assembled here, so the timeout bounds each wait for the next
   * chunk and never the whole generation (a long answer of a slow model does not end in a 502).
   */
  async generate(input: GenerateInput, signal?: AbortSignal): Promise<GenerateResponse> {
    let text = ''
    for await (const batch of await this.generateStream(input, signal)) {
      for (const chunk of batch) {
        text += chunk.response
        if (chunk.done) return { ...chunk, response: text }
      }
    }
    throw this.unavailable('POST /api/generate', 'the stream ended without a final chunk')
  }

  /** A whole chat reply, assembled from the stream (see `generate`). */
  async chat(input: ChatInput, signal?: AbortSignal): Promise<ChatResponse> {
    let text = ''
    for await (const batch of await this.chatStream(input, signal)) {
      for (const chunk of batch) {
        text += chunk.message.content ?? ''
        if (chunk.done) return { ...chunk, message: { ...chunk.message, content: text } }
      }
    }
    throw this.unavailable('POST /api/chat', 'the stream ended without a final chunk')
  }

  async embed(input: { model: string; input: string }, signal?: AbortSignal): Promise<number[]> {
    const data = await this.call('POST /api/embed', (s) => embed({ client: this.client, signal: s, body: input }), signal)
    const vector = data.embeddings[0]
    if (!vector) throw new ModelServerUnavailableError('modelserver_unavailable', `model server at ${this.baseUrl} returned no embedding`)
    return vector
  }
}

const httpsRequest = { request: httpsRequestFn as unknown as typeof httpRequest }

function isChatChunk(chunk: unknown): chunk is ChatChunk {
  const c = chunk as Partial<ChatChunk> | null
  return typeof c === 'object' && c !== null && typeof c.done === 'boolean' && typeof c.message === 'object' && c.message !== null
}

function isGenerateChunk(chunk: unknown): chunk is GenerateChunk {
  const c = chunk as Partial<GenerateChunk> | null
  return typeof c === 'object' && c !== null && typeof c.done === 'boolean' && typeof c.response === 'string'
}

function describe(error: unknown): string {
  // node:http errors carry their code themselves (`connect ECONNREFUSED …`); fetch's are in `cause`.
  const own = error as { code?: unknown; message?: string; name?: string }
  if (typeof own?.code === 'string' && own.name !== 'AbortError' && /^E[A-Z_]+$/.test(own.code)) return `${own.code} (${own.message})`
  const cause = (error as { cause?: { code?: string; message?: string; errors?: { code?: string; message?: string }[] } })?.cause
  const first = cause?.code ? cause : cause?.errors?.find((e) => e.code)
  if (first?.code) return `${first.code}${first.message ? ` (${first.message})` : ''}`
  const message = error instanceof Error ? error.message : String(error)
  return cause?.message ? `${message} (${cause.message})` : message
}

/** Nanoseconds (Ollama durations) to milliseconds. */
export function nsToMs(ns: number | undefined): number {
  return ns === undefined ? 0 : Math.round(ns / 1e3) / 1e3
}
