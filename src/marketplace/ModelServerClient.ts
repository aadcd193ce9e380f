import { createClient } from '../../generated/modelserver/client/index.js'
import { chat, embed, generate, getVersion, listModels } from '../../generated/modelserver/sdk.gen.js'
import type { ChatMessage, ChatResponse, GenerateResponse, ModelOptions, ModelSummary } from '../../generated/modelserver/types.gen.js'
import type { ModelServerModels } from '../../generated/gateway/types.gen.js'
import { BaseError } from '../shared/errors/BaseError.js'

function isoOrRaw(value: string): string {
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? value : date.toISOString()
}

export class ModelServerUnavailableError extends BaseError<'modelserver_unavailable'> {
  override name = 'ModelServerUnavailableError'
}

/** The model server refused the request itself (unknown model, bad option): the caller's mistake, a 400. */
export class ModelRequestError extends BaseError<'model_not_found' | 'model_request_invalid'> {
  override name = 'ModelRequestError'
}

export type ModelServerClientParameters = {
  baseUrl: string
  timeoutMs: number
  fetch?: typeof fetch
}

/**
 * The model server as the gateway uses it, through the SDK generated from `openapi/modelserver.yaml`.
 * A request the model server refuses (404 unknown model, 400 bad option) is the caller's mistake:
 * `model_not_found` / `model_request_invalid` (400). Any other failure — connection refused, timeout, a 5xx,
 * a body that is not what the document says — becomes `modelserver_unavailable` (502 at the gateway).
 */
export class ModelServerClient {
  readonly baseUrl: string
  private readonly client: ReturnType<typeof createClient>
  private readonly timeoutMs: number

  constructor({ baseUrl, timeoutMs, fetch: fetchImpl }: ModelServerClientParameters) {
    this.baseUrl = baseUrl
    this.timeoutMs = timeoutMs
    this.client = createClient({ baseUrl, ...(fetchImpl ? { fetch: fetchImpl } : {}) })
  }

  private async call<T>(what: string, run: (signal: AbortSignal) => Promise<{ data?: T; error?: unknown; response?: Response }>, signal?: AbortSignal): Promise<T> {
    const timeout = AbortSignal.timeout(this.timeoutMs)
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout
    let result: { data?: T; error?: unknown; response?: Response }
    try {
      result = await run(combined)
    } catch (error) {
      const reason = timeout.aborted ? `timed out after ${this.timeoutMs} ms` : describe(error)
      throw new ModelServerUnavailableError('modelserver_unavailable', `model server at ${this.baseUrl} ${what}: ${reason}`, { cause: error })
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

  async generate(
    input: { model: string; prompt: string; system?: string | undefined; options?: ModelOptions | undefined },
    signal?: AbortSignal,
  ): Promise<GenerateResponse> {
    return this.call(
      'POST /api/generate',
      (s) => generate({ client: this.client, signal: s, body: { ...input, stream: false } }) as never,
      signal,
    )
  }

  async chat(input: { model: string; messages: ChatMessage[]; options?: ModelOptions | undefined }, signal?: AbortSignal): Promise<ChatResponse> {
    return this.call('POST /api/chat', (s) => chat({ client: this.client, signal: s, body: { ...input, stream: false } }) as never, signal)
  }

  async embed(input: { model: string; input: string }, signal?: AbortSignal): Promise<number[]> {
    const data = await this.call('POST /api/embed', (s) => embed({ client: this.client, signal: s, body: input }), signal)
    const vector = data.embeddings[0]
    if (!vector) throw new ModelServerUnavailableError('modelserver_unavailable', `model server at ${this.baseUrl} returned no embedding`)
    return vector
  }
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`
  return error instanceof Error ? error.message : String(error)
}

/** Nanoseconds (Ollama durations) to milliseconds. */
export function nsToMs(ns: number | undefined): number {
  return ns === undefined ? 0 : Math.round(ns / 1e3) / 1e3
}
