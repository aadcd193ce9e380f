import type { Capability, ChatMessage, EngineFormat, ModelInfo, ThinkOption, ToolDefinition } from '../engine/Engine.js'
import { ModelServerError, badRequest } from '../errors.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { toModelServerError } from '../ModelServerContext.js'
import { parseKeepAlive } from '../residency/parseKeepAlive.js'
import type { ModelRecord } from '../store/ModelStore.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'
import type { ChatRequest, EmbeddingsRequest, EmbedRequest, GenerateRequest } from '../../../generated/modelserver/types.gen.js'
import { promptTemplateOf, type PromptMessage } from '../template/promptTemplate.js'
import { mergeOptions, runGeneration } from './runGeneration.js'

function requireCapability(info: ModelInfo, capability: Capability, name: string, verb: string = capability): void {
  if (!info.capabilities.includes(capability)) {
    throw new ModelServerError(`${capability}_unsupported`, `"${name}" does not support ${verb}`, 400)
  }
}

function formatOf(format: GenerateRequest['format']): EngineFormat | undefined {
  if (format === undefined || format === '') return undefined
  return format as EngineFormat
}

function thinkOf(think: GenerateRequest['think']): ThinkOption | undefined {
  return think === undefined ? undefined : (think as ThinkOption)
}

function wantsThinking(think: ThinkOption | undefined): boolean {
  return think !== undefined && think !== false
}

/** Load-only / unload-only answers (seed §3.1: a body with only `model`). */
async function preloadOrUnload(
  ctx: ModelServerContext,
  record: ModelRecord,
  name: string,
  keepAliveMs: number,
  shape: 'generate' | 'chat',
): Promise<HttpResult> {
  const base = shape === 'generate' ? { response: '' } : { message: { role: 'assistant', content: '' } }
  if (keepAliveMs === 0) {
    await ctx.residency.unload(record)
    return { status: 200, body: { model: name, created_at: new Date().toISOString(), ...base, done: true, done_reason: 'unload' } }
  }
  const lease = await ctx.residency.acquire(record, { keepAliveMs })
  await lease.release(keepAliveMs)
  return { status: 200, body: { model: name, created_at: new Date().toISOString(), ...base, done: true, done_reason: 'load' } }
}

export async function generate(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as GenerateRequest
  const record = await ctx.findModel(body.model)
  const keepAliveMs = parseKeepAlive(body.keep_alive, ctx.config.keepAliveMs)
  const info = await ctx.inspect(record)
  requireCapability(info, 'completion', body.model, 'generate')
  if ((body.prompt ?? '') === '' && (body.images ?? []).length === 0 && body.suffix === undefined) {
    return preloadOrUnload(ctx, record, body.model, keepAliveMs, 'generate')
  }
  if (body.suffix !== undefined && body.suffix !== '') requireCapability(info, 'insert', body.model)
  if ((body.images ?? []).length > 0) requireCapability(info, 'vision', body.model)
  const think = thinkOf(body.think)
  if (wantsThinking(think)) requireCapability(info, 'thinking', body.model)
  const options = mergeOptions(record, body.options)
  const suffix = body.suffix === '' ? undefined : body.suffix
  const system = body.system ?? record.system
  // As Ollama: unless raw (or fill-in-the-middle), the prompt follows the system prompt and the model's stored
  // messages, rendered with the model's template (a template layer, else the GGUF's own chat template).
  const templated = !body.raw && suffix === undefined
  const conversation: ChatMessage[] = [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    ...(record.messages as ChatMessage[]),
    { role: 'user', content: body.prompt ?? '' },
  ]
  const template = templated && record.template ? promptTemplateOf(record.template) : undefined
  const common = { format: formatOf(body.format), think, options, logprobs: body.logprobs, topLogprobs: body.top_logprobs, signal: req.signal }
  return runGeneration({
    ctx,
    record,
    name: body.model,
    keepAliveMs,
    stream: body.stream !== false,
    signal: req.signal,
    run: (model, onToken) => {
      if (template) return model.complete({ prompt: template.render(conversation as PromptMessage[]), raw: true, ...common, onToken })
      if (templated && record.messages.length > 0) return model.chat({ messages: conversation, ...common, onToken })
      return model.complete({ prompt: body.prompt ?? '', suffix, system, raw: body.raw, ...common, onToken })
    },
    chunk: (piece, createdAt) => ({
      model: body.model,
      created_at: createdAt,
      response: piece.content ?? '',
      ...(piece.thinking !== undefined ? { thinking: piece.thinking } : {}),
      done: false,
      ...(piece.logprobs ? { logprobs: piece.logprobs } : {}),
    }),
    final: (result, m, streamed) => ({
      model: body.model,
      created_at: m.created_at,
      response: streamed ? '' : result.content,
      ...(!streamed && result.thinking ? { thinking: result.thinking } : {}),
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
  })
}

export async function chat(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as ChatRequest
  const record = await ctx.findModel(body.model)
  const keepAliveMs = parseKeepAlive(body.keep_alive, ctx.config.keepAliveMs)
  const info = await ctx.inspect(record)
  requireCapability(info, 'completion', body.model, 'chat')
  const requestMessages = (body.messages ?? []) as ChatMessage[]
  if (requestMessages.length === 0) return preloadOrUnload(ctx, record, body.model, keepAliveMs, 'chat')
  if ((body.tools ?? []).length > 0) requireCapability(info, 'tools', body.model)
  if (requestMessages.some((m) => (m.images ?? []).length > 0)) requireCapability(info, 'vision', body.model)
  const think = thinkOf(body.think)
  if (wantsThinking(think)) requireCapability(info, 'thinking', body.model)
  for (const m of requestMessages) {
    if (m.role === 'tool' && typeof m.content !== 'string') throw badRequest('tool message content must be a string')
  }
  // The model's stored messages and system prompt come first, as Ollama does.
  const messages: ChatMessage[] = [...(record.messages as ChatMessage[])]
  if (record.system && !requestMessages.some((m) => m.role === 'system')) {
    messages.unshift({ role: 'system', content: record.system })
  }
  messages.push(...requestMessages)
  const options = mergeOptions(record, body.options)
  const template = record.template ? promptTemplateOf(record.template) : undefined
  if (template && (body.tools ?? []).length > 0) {
    throw badRequest(`"${body.model}" has its own template (from /api/create); tools are only supported with the model file's chat template`)
  }
  const common = { format: formatOf(body.format), think, options, logprobs: body.logprobs, topLogprobs: body.top_logprobs, signal: req.signal }
  return runGeneration({
    ctx,
    record,
    name: body.model,
    keepAliveMs,
    stream: body.stream !== false,
    signal: req.signal,
    run: (model, onToken) =>
      template
        ? model.complete({ prompt: template.render(messages as PromptMessage[]), raw: true, ...common, onToken })
        : model.chat({ messages, tools: body.tools as ToolDefinition[] | undefined, ...common, onToken }),
    chunk: (piece, createdAt) => ({
      model: body.model,
      created_at: createdAt,
      message: {
        role: 'assistant',
        content: piece.content ?? '',
        ...(piece.thinking !== undefined ? { thinking: piece.thinking } : {}),
      },
      done: false,
      ...(piece.logprobs ? { logprobs: piece.logprobs } : {}),
    }),
    final: (result, m, streamed) => ({
      model: body.model,
      created_at: m.created_at,
      message: {
        role: 'assistant',
        content: streamed ? '' : result.content,
        ...(!streamed && result.thinking ? { thinking: result.thinking } : {}),
        ...(result.toolCalls && result.toolCalls.length > 0 ? { tool_calls: result.toolCalls } : {}),
      },
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
  })
}

export async function embed(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as EmbedRequest
  const record = await ctx.findModel(body.model)
  const keepAliveMs = parseKeepAlive(body.keep_alive, ctx.config.keepAliveMs)
  // An empty string (or list) only loads the model, as Ollama does.
  const inputs = typeof body.input === 'string' ? (body.input === '' ? [] : [body.input]) : body.input
  const info = await ctx.inspect(record)
  if (body.dimensions !== undefined && info.embeddingLength > 0 && body.dimensions > info.embeddingLength) {
    throw badRequest(`dimensions must be between 1 and ${info.embeddingLength}`)
  }
  const started = process.hrtime.bigint()
  if (inputs.length === 0) {
    const lease = await ctx.residency.acquire(record, { keepAliveMs, kind: 'embedding' })
    await lease.release(keepAliveMs)
    return { status: 200, body: { model: body.model, embeddings: [] } }
  }
  const lease = await ctx.residency.acquire(record, { keepAliveMs, kind: 'embedding', signal: req.signal })
  try {
    const result = await lease.model.embed({
      inputs,
      truncate: body.truncate,
      dimensions: body.dimensions,
      options: mergeOptions(record, body.options),
      signal: req.signal,
    })
    ctx.metrics.promptTokens.inc({ model: lease.resident.name }, result.promptEvalCount)
    return {
      status: 200,
      body: {
        model: body.model,
        embeddings: result.embeddings,
        total_duration: Number(process.hrtime.bigint() - started),
        load_duration: lease.loadDurationNs,
        prompt_eval_count: result.promptEvalCount,
      },
    }
  } catch (error) {
    throw toModelServerError(error, body.model)
  } finally {
    await lease.release(keepAliveMs)
  }
}

/** Ollama's older `/api/embeddings`: one vector for `prompt` (an empty prompt only loads the model). */
export async function embeddings(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as EmbeddingsRequest
  const record = await ctx.findModel(body.model)
  const keepAliveMs = parseKeepAlive(body.keep_alive, ctx.config.keepAliveMs)
  const lease = await ctx.residency.acquire(record, { keepAliveMs, kind: 'embedding', signal: req.signal })
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
