import type {
  Capability,
  ChatMessage,
  EngineFormat,
  EngineModel,
  EngineOptions,
  GenerationResult,
  ModelInfo,
  ThinkOption,
  TokenChunk,
  ToolChoice,
  ToolDefinition,
} from '../engine/Engine.js'
import { capabilitiesOf } from '../capabilitiesOf.js'
import { ModelServerError, badRequest } from '../errors.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { toModelServerError } from '../ModelServerContext.js'
import { parseKeepAlive } from '../residency/parseKeepAlive.js'
import type { ModelRecord } from '../store/ModelStore.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'
import type { EmbeddingsRequest, EmbedRequest } from '../../../generated/modelserver/types.gen.js'
import type { NullsDropped } from '../http/nullAsAbsent.js'
import type { ChatBody, GenerateBody } from '../http/requestBodies.js'
import { engineMessages } from './engineMessages.js'
import { promptTemplateOf, type PromptMessage } from '../template/promptTemplate.js'
import { mergeOptions, runGeneration, type RunGenerationParams } from './runGeneration.js'

type EmbedBody = NullsDropped<EmbedRequest>

function requireCapability(info: ModelInfo, capability: Capability, name: string, verb: string = capability): void {
  if (!info.capabilities.includes(capability)) {
    throw new ModelServerError(`${capability}_unsupported`, `"${name}" does not support ${verb}`)
  }
}

function formatOf(format: GenerateBody['format']): EngineFormat | undefined {
  if (format === undefined || format === '') return undefined
  return format as EngineFormat
}

function thinkOf(think: GenerateBody['think']): ThinkOption | undefined {
  return think === undefined ? undefined : (think as ThinkOption)
}

function wantsThinking(think: ThinkOption | undefined): boolean {
  return think !== undefined && think !== false
}

type Shape = 'generate' | 'chat'

/**
 * How a reply is written when it is not Ollama's own shape (the OpenAI-compatible routes): streamed chunks, the
 * final body, the frames that end a stream and the stream's framing.
 */
export type ReplyShape = Pick<RunGenerationParams, 'chunk' | 'final' | 'finalFrames' | 'framing' | 'headersAtStart'>
type TextPart = { content: string; thinking?: string | undefined; toolCalls?: unknown[] | undefined }

/** The shape-specific part of a reply: `response` (+ `thinking`) for generate, `message` for chat. */
function textFields(shape: Shape, text: TextPart): Record<string, unknown> {
  const thinking = text.thinking !== undefined ? { thinking: text.thinking } : {}
  if (shape === 'generate') return { response: text.content, ...thinking }
  const toolCalls = text.toolCalls && text.toolCalls.length > 0 ? { tool_calls: text.toolCalls } : {}
  return { message: { role: 'assistant', content: text.content, ...thinking, ...toolCalls } }
}

/** Load-only / unload-only answers (seed §3.1: a body with only `model`). */
async function preloadOrUnload(ctx: ModelServerContext, record: ModelRecord, name: string, keepAliveMs: number, shape: Shape): Promise<HttpResult> {
  let doneReason = 'load'
  if (keepAliveMs === 0) {
    await ctx.residency.unload(record)
    doneReason = 'unload'
  } else {
    const lease = await ctx.residency.acquire(record, { keepAliveMs })
    await lease.release(keepAliveMs)
  }
  const body = { model: name, created_at: new Date().toISOString(), ...textFields(shape, { content: '' }), done: true, done_reason: doneReason }
  return { status: 200, body }
}

type GenerationBody = Pick<GenerateBody, 'model' | 'keep_alive' | 'think' | 'format' | 'options' | 'logprobs' | 'top_logprobs' | 'stream' | 'truncate' | 'shift'>

/**
 * What the non-Ollama surfaces ask of a chat beyond Ollama's body: `toolChoice` `required` constrains the model to
 * call one of the tools; `thinkWhenCapable` asks a thinking model to think and leaves the others alone (Anthropic's
 * `thinking`, which a model without thoughts simply answers without).
 */
export type ChatExtras = { toolChoice?: ToolChoice | undefined; thinkWhenCapable?: boolean | undefined }

/**
 * What generate and chat check and read alike: the model, keep_alive, the completion and thinking capabilities.
 * `empty`: a body without a prompt or messages — with `keep_alive` 0 an unload, which any model takes (as Ollama:
 * `ollama stop` sends it for an embedding model too).
 */
async function prepare(ctx: ModelServerContext, body: GenerationBody, verb: Shape, empty: boolean) {
  const record = await ctx.findModel(body.model)
  const keepAliveMs = parseKeepAlive(body.keep_alive, ctx.config.keepAliveMs)
  const fileInfo = await ctx.inspect(record)
  // Checked against what `show` reports (a template layer has no tools or thinking).
  const info = { ...fileInfo, capabilities: capabilitiesOf(record, fileInfo) }
  if (!(empty && keepAliveMs === 0)) requireCapability(info, 'completion', body.model, verb)
  const think = thinkOf(body.think)
  return { record, keepAliveMs, info, think }
}

/** Runs one generation for generate or chat and shapes its chunks and final reply (runGeneration streams them). */
function respond(
  ctx: ModelServerContext,
  req: RequestContext,
  shape: Shape,
  body: GenerationBody,
  prepared: { record: ModelRecord; keepAliveMs: number; think: ThinkOption | undefined },
  run: (model: EngineModel, common: CommonParams) => Promise<GenerationResult>,
  reply: ReplyShape | undefined,
): Promise<HttpResult> {
  const { record, keepAliveMs, think } = prepared
  const common: CommonParams = {
    format: formatOf(body.format),
    think,
    options: mergeOptions(record, body.options),
    logprobs: body.logprobs,
    topLogprobs: body.top_logprobs,
    signal: req.signal,
    onToken: undefined,
    truncate: body.truncate,
    shift: body.shift,
  }
  return runGeneration({
    ctx,
    record,
    name: body.model,
    keepAliveMs,
    stream: body.stream !== false,
    signal: req.signal,
    run: (model, onToken, onStart) => run(model, { ...common, onToken, onStart }),
    ...(reply ?? ollamaReply(shape, body.model)),
  })
}

/** Ollama's chunks and final reply. A tool call is streamed in the chunk where it completes, not repeated at the end. */
function ollamaReply(shape: Shape, model: string): ReplyShape {
  return {
    chunk: (piece, createdAt) => ({
      model,
      created_at: createdAt,
      ...textFields(shape, { content: piece.content ?? '', thinking: piece.thinking, toolCalls: piece.toolCalls }),
      done: false,
      ...(piece.logprobs ? { logprobs: piece.logprobs } : {}),
    }),
    final: (result, m, streamed) => ({
      model,
      created_at: m.created_at,
      ...textFields(shape, {
        content: streamed ? '' : result.content,
        thinking: !streamed && result.thinking ? result.thinking : undefined,
        toolCalls: streamed ? undefined : result.toolCalls,
      }),
      done: true,
      done_reason: result.doneReason,
      total_duration: m.total_duration,
      load_duration: m.load_duration,
      prompt_eval_count: m.prompt_eval_count,
      prompt_eval_duration: m.prompt_eval_duration,
      eval_count: m.eval_count,
      eval_duration: m.eval_duration,
      ...(!streamed && result.logprobs ? { logprobs: result.logprobs } : {}),
    }),
  }
}

type CommonParams = {
  format: EngineFormat | undefined
  think: ThinkOption | undefined
  options: EngineOptions
  logprobs: boolean | undefined
  topLogprobs: number | undefined
  signal: AbortSignal
  onToken: ((chunk: TokenChunk) => void) | undefined
  onStart?: (() => void) | undefined
  truncate: boolean | undefined
  shift: boolean | undefined
}

/**
 * `/api/generate`; with `reply` (and the request translated to Ollama's `body`), `/v1/completions`, which never
 * preloads.
 */
export async function generate(
  ctx: ModelServerContext,
  req: RequestContext,
  reply?: ReplyShape,
  body: GenerateBody = req.body as GenerateBody,
): Promise<HttpResult> {
  // As Ollama: without a prompt the body only loads the model, whatever else it carries (a suffix, images…); with
  // keep_alive 0 it unloads it, before any other check.
  const empty = !reply && (body.prompt ?? '') === ''
  const prepared = await prepare(ctx, body, 'generate', empty)
  const { record, info } = prepared
  if (empty && prepared.keepAliveMs === 0) return preloadOrUnload(ctx, record, body.model, 0, 'generate')
  if (body.raw && (body.template || body.system || (body.context ?? []).length > 0)) {
    throw new ModelServerError('raw_mode_unsupported', 'raw mode does not support template, system, or context')
  }
  const suffix = body.suffix === '' ? undefined : body.suffix
  // The capabilities the request asks for are checked before a load as well, as Ollama's scheduler does.
  if (suffix !== undefined) requireCapability(info, 'insert', body.model)
  if (wantsThinking(prepared.think)) requireCapability(info, 'thinking', body.model)
  if (empty) return preloadOrUnload(ctx, record, body.model, prepared.keepAliveMs, 'generate')
  if ((body.images ?? []).length > 0) requireCapability(info, 'vision', body.model)
  const system = body.system ?? record.system
  // As Ollama: unless raw (or fill-in-the-middle), the prompt follows the system prompt and the model's stored
  // messages, rendered with the model's template (a template layer, else the GGUF's own chat template).
  const templated = !body.raw && suffix === undefined
  const conversation = withStoredMessages(record, [{ role: 'user', content: body.prompt ?? '' }], system)
  // The request's own `template` replaces the model's for this request (as Ollama).
  const templateText = body.template || record.template
  const template = templated && templateText ? promptTemplateOf(templateText) : undefined
  return respond(
    ctx,
    req,
    'generate',
    body,
    prepared,
    (model, common) => {
      if (template) return model.complete({ prompt: template.render(conversation as PromptMessage[]), raw: true, ...common })
      if (templated && record.messages.length > 0) return model.chat({ messages: conversation, ...common })
      return model.complete({ prompt: body.prompt ?? '', suffix, system, raw: body.raw, ...common })
    },
    reply,
  )
}

/** `/api/chat`; with `reply` (and the request translated to Ollama's `body`), `/v1/chat/completions`. */
export async function chat(
  ctx: ModelServerContext,
  req: RequestContext,
  reply?: ReplyShape,
  body: ChatBody = req.body as ChatBody,
  extras: ChatExtras = {},
): Promise<HttpResult> {
  const requestMessages = engineMessages(body.messages ?? [])
  const prepared = await prepare(ctx, body, 'chat', !reply && requestMessages.length === 0)
  const { record, info } = prepared
  if (extras.thinkWhenCapable && info.capabilities.includes('thinking')) prepared.think = true
  if (requestMessages.length === 0) {
    if (reply) throw badRequest('messages must not be empty')
    return preloadOrUnload(ctx, record, body.model, prepared.keepAliveMs, 'chat')
  }
  const tools = (body.tools ?? []) as ToolDefinition[]
  if (tools.length > 0) requireCapability(info, 'tools', body.model)
  if (requestMessages.some((m) => (m.images ?? []).length > 0)) requireCapability(info, 'vision', body.model)
  if (wantsThinking(prepared.think)) requireCapability(info, 'thinking', body.model)
  for (const m of requestMessages) {
    if (m.role === 'tool' && typeof m.content !== 'string') throw badRequest('tool message content must be a string')
  }
  const hasSystem = requestMessages.some((m) => m.role === 'system')
  const messages = withStoredMessages(record, requestMessages, hasSystem ? undefined : record.system)
  const template = record.template ? promptTemplateOf(record.template) : undefined
  return respond(
    ctx,
    req,
    'chat',
    body,
    prepared,
    (model, common) =>
      template
        ? model.complete({ prompt: template.render(messages as PromptMessage[]), raw: true, ...common })
        : model.chat({ messages, tools: tools.length > 0 ? tools : undefined, toolChoice: extras.toolChoice, ...common }),
    reply,
  )
}

/** As Ollama: the system prompt (when given), then the model's stored messages, then the request's. */
function withStoredMessages(record: ModelRecord, messages: ChatMessage[], system: string | undefined): ChatMessage[] {
  return [...(system ? [{ role: 'system' as const, content: system }] : []), ...(record.messages as ChatMessage[]), ...messages]
}

export async function embed(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as EmbedBody
  // No input (absent, null, an empty string or list) only loads the model, as Ollama does: how clients preload one.
  const inputs = typeof body.input === 'string' ? (body.input === '' ? [] : [body.input]) : (body.input ?? [])
  const result = await computeEmbeddings(ctx, { ...body, inputs }, req.signal)
  if (inputs.length === 0) return { status: 200, body: { model: body.model, embeddings: [] } }
  return {
    status: 200,
    body: {
      model: body.model,
      embeddings: result.embeddings,
      total_duration: result.totalDurationNs,
      load_duration: result.loadDurationNs,
      prompt_eval_count: result.promptEvalCount,
    },
  }
}

export type EmbeddingsParams = Pick<EmbedBody, 'model' | 'keep_alive' | 'truncate' | 'dimensions' | 'options'> & { inputs: string[] }

/**
 * One vector per input for `/api/embed` and `/v1/embeddings` (no inputs: only loads the model): the model, its
 * residency and queue, `dimensions` checked against the model's embedding length, the token metric.
 */
export async function computeEmbeddings(ctx: ModelServerContext, params: EmbeddingsParams, signal: AbortSignal) {
  const record = await ctx.findModel(params.model)
  const keepAliveMs = parseKeepAlive(params.keep_alive, ctx.config.keepAliveMs)
  const info = await ctx.inspect(record)
  if (params.dimensions !== undefined && info.embeddingLength > 0 && params.dimensions > info.embeddingLength) {
    throw badRequest(`dimensions must be between 1 and ${info.embeddingLength}`)
  }
  const started = process.hrtime.bigint()
  if (params.inputs.length === 0) {
    const lease = await ctx.residency.acquire(record, { keepAliveMs })
    await lease.release(keepAliveMs)
    return { embeddings: [] as number[][], promptEvalCount: 0, loadDurationNs: lease.loadDurationNs, totalDurationNs: Number(process.hrtime.bigint() - started) }
  }
  const lease = await ctx.residency.acquire(record, { keepAliveMs, signal })
  try {
    const result = await lease.model.embed({
      inputs: params.inputs,
      truncate: params.truncate,
      dimensions: params.dimensions,
      options: mergeOptions(record, params.options),
      signal,
    })
    ctx.metrics.promptTokens.inc({ model: lease.resident.name }, result.promptEvalCount)
    return {
      embeddings: result.embeddings,
      promptEvalCount: result.promptEvalCount,
      loadDurationNs: lease.loadDurationNs,
      totalDurationNs: Number(process.hrtime.bigint() - started),
    }
  } catch (error) {
    throw toModelServerError(error, params.model)
  } finally {
    await lease.release(keepAliveMs)
  }
}

/** Ollama's older `/api/embeddings`: one vector for `prompt` (an empty prompt only loads the model). */
export async function embeddings(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as NullsDropped<EmbeddingsRequest>
  const record = await ctx.findModel(body.model)
  const keepAliveMs = parseKeepAlive(body.keep_alive, ctx.config.keepAliveMs)
  const lease = await ctx.residency.acquire(record, { keepAliveMs, signal: req.signal })
  try {
    if (!body.prompt) return { status: 200, body: { embedding: [] } }
    const result = await lease.model.embed({ inputs: [body.prompt], options: mergeOptions(record, body.options), signal: req.signal })
    ctx.metrics.promptTokens.inc({ model: lease.resident.name }, result.promptEvalCount)
    return { status: 200, body: { embedding: result.embeddings[0] ?? [] } }
  } catch (error) {
    throw toModelServerError(error, body.model)
  } finally {
    await lease.release(keepAliveMs)
  }
}
