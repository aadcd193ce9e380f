import type { GenerateBody } from '../http/requestBodies.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'
import type {
  ChatCompletionRequest,
  CompletionRequest,
  EmbeddingRequest,
} from '../../../generated/modelserver/types.gen.js'
import { modelNotFound } from '../errors.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { chatCompletionReply } from '../openai/chatCompletionReply.js'
import { requiredToolChoice, toChatRequest } from '../openai/chatRequest.js'
import { completionReply } from '../openai/completionReply.js'
import { encodeEmbeddingBase64 } from '../openai/encodeEmbedding.js'
import { optionsOf } from '../openai/sampling.js'
import { displayName, parseModelName } from '../store/ModelName.js'
import type { ManifestEntry } from '../store/ModelStore.js'
import { chat, computeEmbeddings, generate } from './generation.js'

/**
 * The OpenAI-compatible routes (`/v1/...`, Ollama's OpenAI compatibility): each request is translated to the
 * `/api/*` request it stands for and runs through the same handler core (engine, residency, queue, metrics);
 * only the reply's shape differs. Errors are turned into OpenAI's shape by the app's error mapping.
 */
export function chatCompletions(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as ChatCompletionRequest
  const reply = chatCompletionReply(body.model, body.stream === true && body.stream_options?.include_usage === true)
  return chat(ctx, req, reply, toChatRequest(body), { toolChoice: requiredToolChoice(body.tool_choice) })
}

export function completions(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as CompletionRequest
  const prompt = typeof body.prompt === 'string' ? body.prompt : body.prompt[0]!
  const request: GenerateBody = {
    model: body.model,
    prompt,
    ...(body.suffix ? { suffix: body.suffix } : {}),
    stream: body.stream === true,
    options: optionsOf(body),
  }
  return generate(ctx, req, completionReply(body.model, body.stream === true && body.stream_options?.include_usage === true), request)
}

export async function embeddings(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as EmbeddingRequest
  const inputs = typeof body.input === 'string' ? [body.input] : body.input
  const result = await computeEmbeddings(ctx, { model: body.model, inputs, dimensions: body.dimensions }, req.signal)
  const base64 = body.encoding_format === 'base64'
  return {
    status: 200,
    body: {
      object: 'list',
      data: result.embeddings.map((v, index) => ({ object: 'embedding', embedding: base64 ? encodeEmbeddingBase64(v) : v, index })),
      model: body.model,
      usage: { prompt_tokens: result.promptEvalCount, total_tokens: result.promptEvalCount },
    },
  }
}

function openaiModel(entry: ManifestEntry) {
  return { id: displayName(entry.name), object: 'model', created: Math.floor(entry.modifiedAt.getTime() / 1000), owned_by: entry.name.namespace }
}

export async function listModels(ctx: ModelServerContext): Promise<HttpResult> {
  const entries = await ctx.store.list()
  return { status: 200, body: { object: 'list', data: entries.map(openaiModel) } }
}

export async function retrieveModel(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const name = req.params.model ?? ''
  const entry = await ctx.store.get(parseModelName(name))
  if (!entry) throw modelNotFound(name)
  return { status: 200, body: openaiModel(entry) }
}
