import { ModelServerUnavailableError } from '../../cost/meter/index.js'
import { MCP_PATH, type McpTool } from '../../mcp/McpTools.js'
import { modelTools } from '../../mcp/tools/modelTools.js'
import { addressRange } from '../../shared/addressRange.js'
import { encodeBase64Json, HEADER_PAYMENT_SIGNATURE } from '../../x402/index.js'
import { errorsOf } from '../errorCatalogue.js'
import type { HandlerContext } from '../types.js'

/** The `/llm` plug-in's MCP tools over one request's services: `list_models` and `chat`, metered like `POST /llm/chat`. */
export function llmMcpTools(ctx: HandlerContext): McpTool[] {
  const { services } = ctx
  return modelTools({
    listModels: async (signal) => {
      const answer = await services.openAi.models(signal)
      // no model list (an answer not JSON): the catalogue's `modelserver_unavailable` as the tool's refusal
      // (the tool's refusal is the plain `{error, message}`, not the OpenAI-shaped body of the HTTP route)
      if (answer.kind !== 'json') throw new ModelServerUnavailableError('modelserver_unavailable', answer.kind === 'refused' ? answer.error.shortMessage : 'the model list could not be read')
      return { status: answer.status, body: answer.body }
    },
    // `POST /llm/chat` through the meter, as one call: the wallet's and its network's quota, or the payment
    // (claimed before the call, capped at what it pays for, settled once the answer exists), the usage ledger
    // and the LLM metrics — with the payment from `_meta` as its header.
    chat: ({ caller, request, payment, clientAddress, signal }) => {
      const { meter, config, marketplace } = services
      const model = request.model
      return meter.call(
        {
          wallet: caller.wallet,
          network: addressRange(clientAddress ?? ctx.ip, config.quota.networkWidth),
          overlord: caller.tier === 'overlord',
          headers: payment === undefined ? {} : { [HEADER_PAYMENT_SIGNATURE.toLowerCase()]: encodeBase64Json(payment) },
          route: 'mcpCall',
          method: 'POST',
          path: MCP_PATH,
          model: typeof model === 'string' ? model : undefined,
          signal,
          statusOf: (error) => errorsOf(ctx).statusOf(error),
          startBeforeQuota: true,
        },
        async (server) => ({ status: 200, body: await marketplace.chat(request as never, { wallet: caller.wallet, server }) }),
      ) as Promise<{ status: number; body?: unknown; headers?: Record<string, unknown> }>
    },
  })
}
