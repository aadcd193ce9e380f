import type { EngineModel, EngineOptions, GenerationResult, ModelKind, TokenChunk } from '../engine/Engine.js'
import { toModelServerError, type ModelServerContext } from '../ModelServerContext.js'
import { publicMessage } from '../errors.js'
import { NdjsonChannel, TOKEN_FLUSH_INTERVAL_MS, ndjsonFraming, type StreamFraming } from '../http/NdjsonChannel.js'
import type { HttpResult } from '../../shared/http/index.js'
import type { ModelRecord } from '../store/ModelStore.js'

export type RunGenerationParams = {
  ctx: ModelServerContext
  record: ModelRecord
  /** The model name as the client sent it (echoed in responses). */
  name: string
  keepAliveMs: number
  stream: boolean
  signal: AbortSignal
  kind?: ModelKind
  /** `onStart` is the engine's (`CommonGenerateParams.onStart`): given only when `headersAtStart`. */
  run: (model: EngineModel, onToken: ((chunk: TokenChunk) => void) | undefined, onStart?: () => void) => Promise<GenerationResult>
  /** A streamed chunk for one token piece (undefined: nothing to send for it; several: events in order). */
  chunk: (piece: TokenChunk, createdAt: string) => Record<string, unknown> | Record<string, unknown>[] | undefined
  /** The final object (streamed: the last line; otherwise the whole body). */
  final: (result: GenerationResult, metrics: FinalMetrics, streamed: boolean) => Record<string, unknown>
  /** Streamed only: the objects that end the stream, when not just `final(…, true)` (OpenAI: finish + usage). */
  finalFrames?: (result: GenerationResult, metrics: FinalMetrics) => Record<string, unknown>[]
  /** How the stream is written; default NDJSON (Ollama). */
  framing?: StreamFraming
  /**
   * Streamed: the status and headers go out as soon as the prompt starts to be evaluated, not with the first
   * token (as the hosted APIs of Anthropic and OpenAI answer at once); a failure after that is in the stream.
   * A proxy in front (the gateway) then has its side of the answer ready before the first token.
   */
  headersAtStart?: boolean
}

export type FinalMetrics = {
  created_at: string
  total_duration: number
  load_duration: number
  prompt_eval_count: number
  prompt_eval_duration: number
  eval_count: number
  eval_duration: number
}

/**
 * Acquires the model (loading it on demand), runs one generation and answers either with one JSON object or
 * with NDJSON chunks. An error before the stream starts — the first token, or with `headersAtStart` the start of
 * the prompt's evaluation — is thrown (proper status); after it, the stream ends with an `{error}` line. The
 * lease is released with the request's keep_alive in every case.
 */
export async function runGeneration(p: RunGenerationParams): Promise<HttpResult> {
  const started = process.hrtime.bigint()
  const lease = await p.ctx.residency.acquire(p.record, { keepAliveMs: p.keepAliveMs, kind: p.kind, signal: p.signal })
  p.ctx.metrics.queueDepth.set({ model: lease.resident.name }, p.ctx.residency.queueDepth(p.record))
  const finish = async () => {
    await lease.release(p.keepAliveMs)
    p.ctx.metrics.queueDepth.set({ model: lease.resident.name }, p.ctx.residency.queueDepth(p.record))
  }
  const metricsOf = (result: GenerationResult): FinalMetrics => {
    p.ctx.metrics.promptTokens.inc({ model: lease.resident.name }, result.promptEvalCount)
    p.ctx.metrics.generatedTokens.inc({ model: lease.resident.name }, result.evalCount)
    return {
      created_at: new Date().toISOString(),
      total_duration: Number(process.hrtime.bigint() - started),
      load_duration: lease.loadDurationNs,
      prompt_eval_count: result.promptEvalCount,
      prompt_eval_duration: Math.round(result.promptEvalDurationNs),
      eval_count: result.evalCount,
      eval_duration: Math.round(result.evalDurationNs),
    }
  }

  if (!p.stream) {
    try {
      const result = await p.run(lease.model, undefined)
      return { status: 200, body: p.final(result, metricsOf(result), false) }
    } catch (error) {
      throw toModelServerError(error, p.name)
    } finally {
      await finish()
    }
  }

  const framing = p.framing ?? ndjsonFraming
  const channel = new NdjsonChannel(TOKEN_FLUSH_INTERVAL_MS, framing)
  let streaming: () => void = () => {}
  const started$ = new Promise<void>((resolve) => (streaming = resolve))
  // One chunk per token (~2,000 per second with the tiny models): the ISO timestamp is formatted once per millisecond.
  let stampMs = 0
  let stamp = ''
  const createdAt = () => {
    const now = Date.now()
    if (now !== stampMs) {
      stampMs = now
      stamp = new Date(now).toISOString()
    }
    return stamp
  }
  const onToken = (piece: TokenChunk) => {
    if (p.signal.aborted) return
    const chunk = p.chunk(piece, createdAt())
    if (chunk === undefined) return
    if (Array.isArray(chunk)) for (const c of chunk) channel.push(c)
    else channel.push(chunk)
    streaming()
  }
  const running = p.run(lease.model, onToken, p.headersAtStart ? streaming : undefined)
  const outcome = await Promise.race([
    started$.then(() => 'streaming' as const),
    running.then(
      () => 'done' as const,
      (error: unknown) => ({ error }),
    ),
  ])
  if (typeof outcome === 'object') {
    await finish()
    throw toModelServerError(outcome.error, p.name)
  }
  running
    .then((result) => {
      const metrics = metricsOf(result)
      for (const frame of p.finalFrames ? p.finalFrames(result, metrics) : [p.final(result, metrics, true)]) channel.push(frame)
      channel.end()
    })
    .catch((error: unknown) => {
      channel.fail(publicMessage(toModelServerError(error, p.name)))
    })
    .finally(() => void finish())
  return { status: 200, contentType: framing.contentType, stream: channel, ...(p.headersAtStart ? { flushHeaders: true } : {}) }
}

/** The model's stored parameters overlaid with the request's `options`. */
export function mergeOptions(record: ModelRecord, options: Record<string, unknown> | undefined): EngineOptions {
  return { ...(record.parameters ?? {}), ...(options ?? {}) } as EngineOptions
}
