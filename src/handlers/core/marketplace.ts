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
import type { Handler, HandlerContext } from '../types.js'
import { requireWallet } from './session.js'

const call = (ctx: HandlerContext) => ({ wallet: ctx.locals.session?.wallet, signal: ctx.signal })

export const callMarketplaceAgent: Handler = async (ctx) => ({
  status: 200,
  body: (await ctx.services.marketplace.callAgent(ctx.body as MarketplaceCallRequest, call(ctx))) satisfies MarketplaceCallResult,
})

export const ingestModelServerPrompt: Handler = async (ctx) => ({
  status: 200,
  body: (await ctx.services.marketplace.ingest(ctx.body as IngestRequest, call(ctx))) satisfies IngestResult,
})

export const getCeoStatus: Handler = async (ctx) => ({
  status: 200,
  body: (await ctx.services.marketplace.ceoStatus(ctx.query.company as string)) as CeoStatus,
})

/** Cost endpoints: a session and one unit of the wallet's daily quota (402 `quota_exceeded` past it). */
const cost =
  (run: (ctx: HandlerContext) => Promise<unknown>): Handler =>
  async (ctx) => {
    const wallet = requireWallet(ctx)
    if (typeof wallet !== 'string') return wallet
    await ctx.services.quota.consume(wallet)
    try {
      return { status: 200, body: await run(ctx) }
    } catch (error) {
      // A call that failed (model server down, unknown model, no cabinet) does not count against the quota.
      await ctx.services.quota.refund(wallet)
      throw error
    }
  }

export const evolveAgent = cost((ctx) => ctx.services.marketplace.evolve(ctx.params.id!, ctx.body as EvolveRequest, call(ctx)))
export const createCoordinatorTask = cost((ctx) =>
  ctx.services.marketplace.coordinate(ctx.body as CoordinatorTaskRequest, call(ctx)),
)
export const conveneBoardroom = cost((ctx) =>
  ctx.services.marketplace.convene(ctx.body as ConveneRequest, call(ctx)),
)
export const llmChat = cost((ctx) => ctx.services.marketplace.chat(ctx.body as LlmChatRequest, call(ctx)))
export const llmCompletion = cost((ctx) =>
  ctx.services.marketplace.completion(ctx.body as LlmCompletionRequest, call(ctx)),
)
