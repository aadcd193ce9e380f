import type { IncomingHttpHeaders } from 'node:http'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { meterCostCall } from '../../cost/meterCostCall.js'
import { createMcpServer } from '../../mcp/createMcpServer.js'
import { type McpCaller, McpTools, type McpToolPorts, MCP_PATH } from '../../mcp/McpTools.js'
import type { HttpResult } from '../../shared/http/index.js'
import { encodeBase64Json, HEADER_PAYMENT_SIGNATURE } from '../../x402/index.js'
import { callerOf } from '../core/session.js'
import { errorToResult } from '../errorCatalogue.js'
import type { Handler, HandlerContext } from '../types.js'

const SERVER_VERSION = '1.0.0'

/**
 * `POST /mcp`: the thin adapter between the pipeline and the MCP SDK's Streamable HTTP transport (its
 * web-standard variant: a `Request` in, a `Response` out, so the answer goes back through the pipeline's
 * response validation like any other). Stateless: one server and one transport per request, JSON answers.
 * The tools (src/mcp/) call the services the HTTP routes call; the ports below hand them over.
 */
export const mcpCall: Handler = async (ctx) => {
  const caller = callerOf(ctx)
  const tools = new McpTools(ctx.services.mcp.catalog, portsOf(ctx))
  const server = createMcpServer(tools, { caller: 'status' in caller ? undefined : (caller as McpCaller), clientAddress: ctx.ip, signal: ctx.signal }, SERVER_VERSION)
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  await server.connect(transport)
  try {
    const request = new Request(`http://gateway${ctx.url}`, { method: ctx.method, headers: webHeaders(ctx.headers), signal: ctx.signal })
    const response = await transport.handleRequest(request, { parsedBody: ctx.body })
    const text = await response.text()
    const result: HttpResult = { status: response.status, headers: { 'Cache-Control': 'no-store' } }
    if (text !== '') result.body = JSON.parse(text)
    return result
  } finally {
    await server.close()
  }
}

function webHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers()
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    out.set(name, Array.isArray(value) ? value.join(', ') : value)
  }
  return out
}

/** What the MCP tools call, from the one service graph: the same services and metering as the HTTP routes. */
function portsOf(ctx: HandlerContext): McpToolPorts {
  const { services } = ctx
  return {
    storage: services.storage,
    receipt: (arTxId) => services.batch.receipt(arTxId),
    listModels: async (signal) => {
      const answer = await services.openAi.models(signal)
      return answer.kind === 'json' ? { status: answer.status, body: answer.body } : { status: 502, body: { error: 'modelserver_unavailable', message: 'the model list could not be read' } }
    },
    // `POST /llm/chat` through the cost meter: quota, or the payment (claimed before the call, settled once the
    // answer exists), the usage ledger and the LLM metrics — with the payment from `_meta` as its header.
    chat: ({ caller, request, payment, signal }) => {
      const { quota, costPayments, usage, llmMetrics, logger, config, marketplace } = services
      const model = request.model
      return meterCostCall(
        { quota, payments: costPayments, usage, metrics: llmMetrics, logger, statusOf: (error) => errorToResult(error)?.status ?? 500, defaultModel: config.modelServer.chatModel },
        {
          wallet: caller.wallet,
          overlord: caller.tier === 'overlord',
          headers: payment === undefined ? {} : { [HEADER_PAYMENT_SIGNATURE.toLowerCase()]: encodeBase64Json(payment) },
          route: 'mcpCall',
          method: 'POST',
          path: MCP_PATH,
          model: typeof model === 'string' ? model : undefined,
          signal,
          startBeforeQuota: true,
        },
        async (runSignal) => ({ status: 200, body: await marketplace.chat(request as never, { wallet: caller.wallet, signal: runSignal ?? signal }) }),
      ) as Promise<{ status: number; body?: unknown; headers?: Record<string, unknown> }>
    },
    describeError: (error) => errorToResult(error),
    publicOrigin: services.config.publicOrigin,
    config: services.mcp.config,
  }
}
