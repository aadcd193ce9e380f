import { errorsOf } from '../errorCatalogue.js'
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
import type { Handler } from '../types.js'
import { ndjsonResult } from './ndjsonResult.js'
import { cost, costResult } from './cost.js'
import { call, logStreamError } from './marketplaceCall.js'

/**
 * `stream: true`: the call is opened (refusals still get their status), then chunks go out as they come. A cost
 * call: it only asks the model server, so it starts while the quota unit is taken.
 */
export const callMarketplaceAgent: Handler = costResult(
  async (ctx, server) => {
    const body = ctx.body as MarketplaceCallRequest
    if (body.stream) return ndjsonResult(await ctx.services.marketplace.callAgentStream(body, call(ctx, server)), errorsOf(ctx), logStreamError(ctx))
    return { status: 200, body: (await ctx.services.marketplace.callAgent(body, call(ctx, server))) satisfies MarketplaceCallResult }
  },
  { startBeforeQuota: true },
)

/** A cost call (its generation and, with `remember`, its embedding are one metered call). */
export const ingestModelServerPrompt: Handler = cost(async (ctx, server) => (await ctx.services.marketplace.ingest(ctx.body as IngestRequest, call(ctx, server))) satisfies IngestResult)

export const getCeoStatus: Handler = async (ctx) => ({
  status: 200,
  body: (await ctx.services.marketplace.ceoStatus(ctx.query.company as string)) as CeoStatus,
})

export const evolveAgent = cost((ctx, server) => ctx.services.marketplace.evolve(ctx.params.id!, ctx.body as EvolveRequest, call(ctx, server)))
export const createCoordinatorTask = cost((ctx, server) => ctx.services.marketplace.coordinate(ctx.body as CoordinatorTaskRequest, call(ctx, server)))
export const conveneBoardroom = cost((ctx, server) => ctx.services.marketplace.convene(ctx.body as ConveneRequest, call(ctx, server)))
