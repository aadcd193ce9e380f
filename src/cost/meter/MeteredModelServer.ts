import type { ChatChunk, ChatResponse, GenerateChunk, GenerateResponse } from '../../../generated/modelserver/types.gen.js'
import type { ChatInput, GenerateInput, UpstreamResponse } from '../../modelserverClient/ModelServerClient.js'
import type { ModelServerPool } from '../../modelserverClient/ModelServerPool.js'
import { usageOf } from '../callUsage.js'
import { capGeneration, type GenerationLimitField } from '../capGeneration.js'
import type { CallBudget, GenerationAccount } from './CallBudget.js'
import { batchReader, bytesReader, counted, countedJson, countedWithout, type CountingOptions } from './countedStreams.js'
import { UsageEventFilter } from './usageEvents.js'

/** What the meter asks of the model servers (the pool; a test may hand a scripted one). */
export type ModelServerPort = Pick<ModelServerPool, 'generate' | 'chat' | 'generateStream' | 'chatStream' | 'generateStreamRaw' | 'embed' | 'open' | 'withServer'>

/** The routes of the model server's OpenAI- and Anthropic-compatible API the gateway proxies. */
export type OpenAiPath = '/v1/chat/completions' | '/v1/completions' | '/v1/embeddings' | '/v1/responses' | '/v1/messages'

/**
 * How a generation shares the call's budget: `of` is the number of generations of the call still to run, this
 * one included (each gets an even share of what is left).
 */
export type Share = { of?: number }

/** The signals a call's model-server requests run under (see `Meter`). */
export type CallSignals = {
  /** Whole answers: the client going away ends them (nothing of them was served). */
  whole: AbortSignal | undefined
  /** Streams: for a call paid per token, only the meter's own end (a stream the client left is read to its count). */
  stream: AbortSignal | undefined
}

const LIMIT_OF: Record<Exclude<OpenAiPath, '/v1/embeddings'>, GenerationLimitField> = {
  '/v1/chat/completions': 'max_tokens',
  '/v1/completions': 'max_tokens',
  '/v1/messages': 'max_tokens',
  '/v1/responses': 'max_output_tokens',
}

const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined)

/** The smaller of the limits a body asks for (`undefined`: none). */
function askedLimit(body: Record<string, unknown>, field: GenerationLimitField): number | undefined {
  if (field === 'num_predict') return positive((body.options as Record<string, unknown> | undefined)?.num_predict)
  if (field === 'max_output_tokens') return positive(body.max_output_tokens)
  const limits = [positive(body.max_tokens), positive(body.max_completion_tokens)].filter((n) => n !== undefined)
  return limits.length > 0 ? Math.min(...limits) : undefined
}

/**
 * The model server as one metered call sees it — the only way the gateway's rooms reach it. Each generation
 * takes its share of the call's budget before it is sent (its request capped at what is left: `num_predict`,
 * `max_tokens`, `max_output_tokens`), and is counted with the model server's own counts: a whole answer's
 * usage, a stream's final usage event — asked for on every stream (`stream_options.include_usage` on the
 * OpenAI routes, taken out again when the client did not ask for it). A stream that ends without that count
 * is billed its whole share (`CallBudget`). Made by the meter per call; never kept beyond it.
 */
export class MeteredModelServer {
  readonly #pool: ModelServerPort
  readonly #budget: CallBudget
  readonly #signals: CallSignals
  readonly #counting: CountingOptions

  constructor(pool: ModelServerPort, budget: CallBudget, signals: CallSignals, counting: CountingOptions) {
    this.#pool = pool
    this.#budget = budget
    this.#signals = signals
    this.#counting = counting
  }

  /** Tokens the call may still generate (`undefined`: no cap). */
  get remainingTokens(): number | undefined {
    return this.#budget.remaining
  }

  #capped<T extends { options?: unknown }>(input: T, account: GenerationAccount): T {
    return account.maxTokens === undefined ? input : (capGeneration(input, 'num_predict', account.maxTokens) as T)
  }

  async #whole<T>(account: GenerationAccount, run: () => Promise<T>): Promise<T> {
    let reply: T
    try {
      reply = await run()
    } catch (error) {
      // nothing of a whole answer that failed was served
      account.counted({})
      throw this.#counting.cutBy() ?? error
    }
    account.counted(usageOf(reply))
    return reply
  }

  async #opened<T>(account: GenerationAccount, open: () => Promise<AsyncGenerator<T[]>>): Promise<AsyncGenerator<T[]>> {
    let upstream: AsyncGenerator<T[]>
    try {
      upstream = await open()
    } catch (error) {
      account.counted({})
      throw this.#counting.cutBy() ?? error
    }
    return counted(upstream, batchReader<T>(), account, this.#counting)
  }

  /** `/api/generate`, whole. */
  generate(input: GenerateInput, share: Share = {}): Promise<GenerateResponse> {
    const account = this.#budget.open(share.of, askedLimit(input, 'num_predict'))
    return this.#whole(account, () => this.#pool.generate(this.#capped(input, account), this.#signals.whole))
  }

  /** `/api/chat`, whole. */
  chat(input: ChatInput, share: Share = {}): Promise<ChatResponse> {
    const account = this.#budget.open(share.of, askedLimit(input, 'num_predict'))
    return this.#whole(account, () => this.#pool.chat(this.#capped(input, account), this.#signals.whole))
  }

  /** `/api/generate`, streamed in chunk batches (opened: a refusal is thrown before any chunk). */
  generateStream(input: GenerateInput, share: Share = {}): Promise<AsyncGenerator<GenerateChunk[]>> {
    const account = this.#budget.open(share.of, askedLimit(input, 'num_predict'))
    return this.#opened(account, () => this.#pool.generateStream(this.#capped(input, account), this.#signals.stream))
  }

  /** `/api/chat`, streamed in chunk batches. */
  chatStream(input: ChatInput, share: Share = {}): Promise<AsyncGenerator<ChatChunk[]>> {
    const account = this.#budget.open(share.of, askedLimit(input, 'num_predict'))
    return this.#opened(account, () => this.#pool.chatStream(this.#capped(input, account), this.#signals.stream))
  }

  /** `/api/generate` with Ollama's own body, streamed as the model server's NDJSON bytes. */
  async generateStreamRaw(body: Record<string, unknown>): Promise<AsyncGenerator<Uint8Array>> {
    const account = this.#budget.open(1, askedLimit(body, 'num_predict'))
    let upstream: UpstreamResponse
    try {
      upstream = await this.#pool.generateStreamRaw(this.#capped(body, account), this.#signals.stream)
    } catch (error) {
      account.counted({})
      throw this.#counting.cutBy() ?? error
    }
    return counted(upstream.bytes, bytesReader(), account, this.#counting)
  }

  /** An embedding (no completion tokens: never refused for a spent budget). */
  embed(input: { model: string; input: string }): Promise<number[]> {
    return this.#whole(this.#budget.track(), () => this.#pool.embed(input, this.#signals.whole))
  }

  /** A tiny generation on the server the pool picks for `model`, saying which one it was (`POST /llm/test`). */
  async generateOn(input: GenerateInput): Promise<{ result: GenerateResponse; baseUrl: string }> {
    const account = this.#budget.open(1, askedLimit(input, 'num_predict'))
    try {
      const answer = await this.#pool.withServer(input.model, (server) => server.generate(this.#capped(input, account), this.#signals.whole))
      account.counted(usageOf(answer.result))
      return answer
    } catch (error) {
      account.counted({})
      throw this.#counting.cutBy() ?? error
    }
  }

  /**
   * A call of the model server's OpenAI- or Anthropic-compatible API, its body as the client sent it (resolved):
   * the answer as it comes — a stream's bytes counted on the way, a JSON body counted once read.
   */
  async openAi(path: OpenAiPath, body: Record<string, unknown>): Promise<UpstreamResponse> {
    const field = path === '/v1/embeddings' ? undefined : LIMIT_OF[path]
    const account = field === undefined ? this.#budget.track() : this.#budget.open(1, askedLimit(body, field))
    const streamed = body.stream === true
    let request = field !== undefined && account.maxTokens !== undefined ? (capGeneration(body, field, account.maxTokens) as Record<string, unknown>) : body
    // The model server's count of a stream: its usage event, asked for where the route makes it optional.
    const options = request.stream_options as { include_usage?: unknown } | undefined
    const forceUsage = streamed && (path === '/v1/chat/completions' || path === '/v1/completions') && options?.include_usage !== true
    if (forceUsage) request = { ...request, stream_options: { ...(options ?? {}), include_usage: true } }
    let upstream: UpstreamResponse
    try {
      upstream = await this.#pool.open(`POST ${path}`, { method: 'POST', path, body: request }, streamed ? this.#signals.stream : this.#signals.whole)
    } catch (error) {
      account.counted({})
      throw this.#counting.cutBy() ?? error
    }
    if (upstream.status !== 200) {
      account.counted({})
      return upstream
    }
    if (!upstream.contentType.startsWith('text/event-stream')) return { ...upstream, bytes: countedJson(upstream.bytes, account) }
    const bytes = forceUsage ? countedWithout(upstream.bytes, account, this.#counting, new UsageEventFilter()) : counted(upstream.bytes, bytesReader(), account, this.#counting)
    return { ...upstream, bytes }
  }
}
