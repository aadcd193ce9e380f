import { errorsOf } from '../errorCatalogue.js'
import type { LlmChatRequest, LlmCompletionRequest } from '../../../generated/gateway/types.gen.js'
import type { ChunkStream, Marketplace, MarketplaceCall } from '../../marketplace/Marketplace.js'
import { costResult } from '../core/cost.js'
import { call, logStreamError } from '../core/marketplaceCall.js'
import { ndjsonResult } from '../core/ndjsonResult.js'
import type { Handler } from '../types.js'

/**
 * A model call answered as NDJSON chunks (`stream: true`) or as one JSON body. It only asks the model server,
 * so it starts while the quota unit is taken.
 */
const modelCall = <B extends { stream?: boolean | undefined }>(
  streamed: (marketplace: Marketplace, body: B, c: MarketplaceCall) => Promise<ChunkStream<unknown>>,
  whole: (marketplace: Marketplace, body: B, c: MarketplaceCall) => Promise<unknown>,
): Handler =>
  costResult(
    async (ctx, server) => {
      const body = ctx.body as B
      const { marketplace } = ctx.services
      if (body.stream) return ndjsonResult(await streamed(marketplace, body, call(ctx, server)), errorsOf(ctx), logStreamError(ctx))
      return { status: 200, body: await whole(marketplace, body, call(ctx, server)) }
    },
    { startBeforeQuota: true },
  )
export const llmChat = modelCall<LlmChatRequest>((m, body, c) => m.chatStream(body, c), (m, body, c) => m.chat(body, c))
export const llmCompletion = modelCall<LlmCompletionRequest>((m, body, c) => m.completionStream(body, c), (m, body, c) => m.completion(body, c))
