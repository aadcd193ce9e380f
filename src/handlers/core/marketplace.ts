import type {
  CeoStatus,
  ConveneRequest,
  CoordinatorTaskRequest,
  EvolveRequest,
  IngestRequest,
  IngestResult,
  LlmChatRequest,
  LlmCompletionRequest,
  MarketplaceCallRequest,
  MarketplaceCallResult,
} from '../../../generated/gateway/types.gen.js'
import type { ChunkStream, Marketplace } from '../../marketplace/Marketplace.js'
import type { Handler, HandlerContext } from '../types.js'
import { ndjsonResult } from './ndjsonResult.js'
import { cost, costResult } from './cost.js'
import { callerOf } from './session.js'

const call = (ctx: HandlerContext, signal: AbortSignal = ctx.signal) => {
  const caller = callerOf(ctx)
  return { wallet: 'status' in caller ? undefined : caller.wallet, signal }
}

const logStreamError = (ctx: HandlerContext) => (error: unknown) =>
  ctx.services.logger.warn({ err: error, operationId: ctx.operationId }, 'stream ended with an error')

/** `stream: true`: the call is opened (refusals still get their status), then chunks go out as they come. */
export const callMarketplaceAgent: Handler = async (ctx) => {
  const body = ctx.body as MarketplaceCallRequest
  if (body.stream) return ndjsonResult(await ctx.services.marketplace.callAgentStream(body, call(ctx)), logStreamError(ctx))
  return { status: 200, body: (await ctx.services.marketplace.callAgent(body, call(ctx))) satisfies MarketplaceCallResult }
}

export const ingestModelServerPrompt: Handler = async (ctx) => ({
  status: 200,
  body: (await ctx.services.marketplace.ingest(ctx.body as IngestRequest, call(ctx))) satisfies IngestResult,
})

export const getCeoStatus: Handler = async (ctx) => ({
  status: 200,
  body: (await ctx.services.marketplace.ceoStatus(ctx.query.company as string)) as CeoStatus,
})

export const evolveAgent = cost((ctx) => ctx.services.marketplace.evolve(ctx.params.id!, ctx.body as EvolveRequest, call(ctx)))
export const createCoordinatorTask = cost((ctx) =>
  ctx.services.marketplace.coordinate(ctx.body as CoordinatorTaskRequest, call(ctx)),
)
export const conveneBoardroom = cost((ctx) =>
  ctx.services.marketplace.convene(ctx.body as ConveneRequest, call(ctx)),
)
/**
 * A model call answered as NDJSON chunks (`stream: true`) or as one JSON body. It only asks the model server,
 * so it starts while the quota unit is taken.
 */
const modelCall = <B extends { stream?: boolean | undefined }>(
  streamed: (marketplace: Marketplace, body: B, c: ReturnType<typeof call>) => Promise<ChunkStream<unknown>>,
  whole: (marketplace: Marketplace, body: B, c: ReturnType<typeof call>) => Promise<unknown>,
): Handler =>
  costResult(
    async (ctx, signal) => {
      const body = ctx.body as B
      const { marketplace } = ctx.services
      if (body.stream) return ndjsonResult(await streamed(marketplace, body, call(ctx, signal)), logStreamError(ctx))
      return { status: 200, body: await whole(marketplace, body, call(ctx, signal)) }
    },
    { startBeforeQuota: true },
  )
export const llmChat = modelCall<LlmChatRequest>((m, body, c) => m.chatStream(body, c), (m, body, c) => m.chat(body, c))
export const llmCompletion = modelCall<LlmCompletionRequest>((m, body, c) => m.completionStream(body, c), (m, body, c) => m.completion(body, c))
