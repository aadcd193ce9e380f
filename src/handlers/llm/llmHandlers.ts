import type {
  CoreAgentInteractRequest,
  CoreAgentMemoryRequest,
  CoreAgentSearchRequest,
  LlmGenerateRequest,
  LlmKeyCreateRequest,
  LlmTestRequest,
} from '../../../generated/gateway/types.gen.js'
import type { MeteredModelServer } from '../../cost/meter/index.js'
import { clampKeepAlive } from '../../llm/clampKeepAlive.js'
import type { OpenAiPath, OpenAiProxyResult } from '../../llm/OpenAiProxy.js'
import type { HttpResult } from '../../shared/http/index.js'
import { costResult } from '../core/cost.js'
import { type Caller, requireCaller } from '../core/session.js'
import type { Handler, HandlerContext } from '../types.js'

/** A session operation's handler that needs the caller (401 `auth_required` when the request got in anonymously). */
const withCaller =
  (run: (ctx: HandlerContext, caller: Caller) => Promise<HttpResult>): Handler =>
  async (ctx) => {
    return run(ctx, requireCaller(ctx))
  }

// ── /llm keys ──

export const listLlmKeys = withCaller(async (ctx, caller) => ({ status: 200, body: { keys: await ctx.services.llmKeys.list(caller.wallet) } }))

/** `llm.key.created` / `llm.key.revoked` (asyncapi/events.yaml): who, which key — never the key itself. */
const keyEvent = (ctx: HandlerContext, kind: 'llm.key.created' | 'llm.key.revoked', wallet: string, key: { key_id: string; prefix: string; name: string }) =>
  ctx.services.catalogue.emit({ kind, actor: wallet.toLowerCase(), payload: { wallet: wallet.toLowerCase(), key_id: key.key_id, prefix: key.prefix, name: key.name } })

export const createLlmKey = withCaller(async (ctx, caller) => {
  const key = await ctx.services.llmKeys.create(caller.wallet, (ctx.body as LlmKeyCreateRequest | undefined)?.name)
  await keyEvent(ctx, 'llm.key.created', caller.wallet, key)
  return { status: 201, headers: { 'Cache-Control': 'no-store' }, body: key }
})

export const revokeLlmKey = withCaller(async (ctx, caller) => {
  const key = await ctx.services.llmKeys.revoke(caller.wallet, ctx.params.key_id!)
  await keyEvent(ctx, 'llm.key.revoked', caller.wallet, key)
  return { status: 200, body: key }
})

// ── /llm usage ──

/** The wallet's cost calls and spend by day (usage ledger), and today's quota. */
export const getLlmUsage = withCaller(async (ctx, caller) => {
  const { usage, quota, costPayments } = ctx.services
  const report = await usage.report(caller.wallet, (ctx.query.days as number | undefined) ?? 30)
  return {
    status: 200,
    body: {
      wallet: caller.wallet.toLowerCase(),
      ...report,
      quota: await quota.state(caller.wallet),
      price_per_call_atomic: costPayments.enabled && costPayments.priceAtomic > 0n ? costPayments.priceAtomic.toString() : null,
      upto: costPayments.enabled && costPayments.uptoEnabled ? costPayments.uptoTerms() : null,
    },
  }
})

// ── /llm test and generate ──

/** Tokens a `POST /llm/test` may generate: a check, not a cost call. */
const TEST_TOKENS = 8

/** A check, metered but free: no quota, no payment, at most `TEST_TOKENS` tokens, recorded in the usage ledger. */
export const testLlm = costResult(
  async (ctx, server) => {
    const model = (ctx.body as LlmTestRequest | undefined)?.model ?? ctx.services.config.modelServer.chatModel
    const started = performance.now()
    const { result: reply, baseUrl } = await server.generateOn({ model, prompt: 'Say OK.', options: { num_predict: TEST_TOKENS, temperature: 0 } })
    return {
      status: 200,
      body: {
        ok: true,
        model: reply.model,
        modelserver: baseUrl,
        response: reply.response,
        eval_count: reply.eval_count ?? 0,
        latency_ms: Math.round((performance.now() - started) * 1000) / 1000,
      },
    }
  },
  { free: true, maxTokens: TEST_TOKENS },
)

/**
 * Ollama's own `/api/generate`, passed through (its body, its chunks) with the caller's quota. It only asks the
 * model server (the agent lookup reads), so the call starts while the quota unit is taken.
 */
export const llmGenerate = costResult(
  async (ctx, server) => {
    const body = ctx.body as LlmGenerateRequest
    const { marketplace, config } = ctx.services
    let request: Record<string, unknown> = { ...body, model: body.model ?? config.modelServer.chatModel, stream: body.stream ?? true }
    // The models are shared: a user neither unloads them for everyone (0) nor pins one (-1).
    if (requireCaller(ctx).tier !== 'overlord') request.keep_alive = clampKeepAlive(body.keep_alive, config.keepAlive)
    if (marketplace.isAgent(request.model as string)) {
      const agent = await marketplace.agentContext(request.model as string)
      request = { ...request, model: agent.model, system: body.system ?? agent.instructions }
    }
    if (!request.stream) return { status: 200, body: await server.generate(request as never) }
    return { status: 200, contentType: 'application/x-ndjson', headers: { 'Cache-Control': 'no-store' }, stream: await server.generateStreamRaw(request) }
  },
  { startBeforeQuota: true },
)

// ── /llm/v1 (OpenAI-compatible) ──

function proxied(result: OpenAiProxyResult): HttpResult {
  if (result.kind === 'refused') throw result.error
  if (result.kind === 'stream')
    return { status: result.status, contentType: result.contentType, headers: { 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' }, stream: result.bytes }
  return { status: result.status, body: result.body }
}

/** A proxied model call and nothing else: it starts while the quota unit is taken. */
const openAiCost = (path: OpenAiPath) =>
  costResult(async (ctx, server) => proxied(await ctx.services.openAi.forward(path, ctx.body as Record<string, unknown>, server)), { startBeforeQuota: true })

export const openAiChatCompletions = openAiCost('/v1/chat/completions')
export const openAiCompletions = openAiCost('/v1/completions')
export const openAiEmbeddings = openAiCost('/v1/embeddings')
export const openAiResponses = openAiCost('/v1/responses')
export const anthropicMessages = openAiCost('/v1/messages')
export const openAiModels = withCaller(async (ctx) => proxied(await ctx.services.openAi.models(ctx.signal)))

// ── /coreagent ──

const coreAgentCall = (ctx: HandlerContext, server: MeteredModelServer) => ({ wallet: requireCaller(ctx).wallet, server })

export const coreAgentInteract = costResult(async (ctx, server) => ({ status: 200, body: await ctx.services.coreAgent.interact(ctx.body as CoreAgentInteractRequest, coreAgentCall(ctx, server)) }))

/** Cost calls: a memory is logged and searched by its embedding (the model server's work). */
export const logCoreAgentMemory = costResult(async (ctx, server) => ({
  status: 201,
  body: await ctx.services.coreAgent.remember(ctx.body as CoreAgentMemoryRequest, coreAgentCall(ctx, server)),
}))

export const searchCoreAgentMemories = costResult(async (ctx, server) => ({
  status: 200,
  body: { memories: await ctx.services.coreAgent.search(ctx.body as CoreAgentSearchRequest, coreAgentCall(ctx, server)) },
}))

