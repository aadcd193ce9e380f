import type {
  CeoStatus,
  ConveneRequest,
  CoordinatorTaskRequest,
  EvolveRequest,
  IngestRequest,
  IngestResult,
  MarketplaceCallRequest,
  MarketplaceCallResult,
} from '../../../generated/gateway/types.gen.js'
import type { Handler, HandlerContext } from '../types.js'
import { ndjsonResult } from './ndjsonResult.js'
import { cost } from './cost.js'
import { call, logStreamError } from './marketplaceCall.js'

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
