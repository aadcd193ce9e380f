import type { CallToolResult } from '@modelcontextprotocol/server'
import { decodeBase64Json, HEADER_PAYMENT_RESPONSE, PaymentRequiredError, renderPaymentRequired } from '../../x402/index.js'
import type { McpCaller, McpTool, MeteredAnswer, ToolCall, ToolContext } from '../McpTool.js'
import { errorResult, META_PAYMENT, okResult, paymentRequiredResult } from '../toolResults.js'

/** What the model tools call: the answers of `/llm/v1/models` and of `POST /llm/chat` through the meter. */
export type ModelToolPorts = {
  /** `GET /llm/v1/models`' answer (the model list, or the `Error` of an unreachable model server). */
  listModels: (signal: AbortSignal) => Promise<MeteredAnswer>
  /**
   * One chat call metered like `POST /llm/chat`: the caller's quota (its wallet's and its network's), or the
   * payment (the `PaymentPayload` as sent) when there is one, capped at what it pays for and settled only once
   * the call produced its answer; recorded in the usage ledger.
   */
  chat: (call: { caller: McpCaller; request: Record<string, unknown>; payment: unknown; clientAddress: string | undefined; signal: AbortSignal }) => Promise<MeteredAnswer>
}

/** The `/llm` tools: `list_models` (free) and `chat` (the quota, then paid per call). */
export function modelTools(ports: ModelToolPorts): McpTool[] {
  return [
    {
      name: 'list_models',
      call: async (call) => {
        const answer = await ports.listModels(call.signal)
        return answer.status >= 400 ? errorResult(answer.body as { error: string; message: string }) : okResult(answer.body as Record<string, unknown>)
      },
    },
    { name: 'chat', call: (call, context) => chat(ports, call, context) },
  ]
}

async function chat(ports: ModelToolPorts, call: ToolCall, context: ToolContext): Promise<CallToolResult> {
  if (!call.caller) {
    return errorResult({ error: 'auth_required', message: 'chat needs an identity: send X-Session-Token, Authorization: Bearer with a session token or an /llm API key, or a sign-in-with-x proof (the SIGN-IN-WITH-X header or _meta["sign-in-with-x"])' })
  }
  // a tool result is whole: no NDJSON stream
  const request = { ...call.arguments, stream: false }
  let answer: MeteredAnswer
  try {
    answer = await ports.chat({ caller: call.caller, request, payment: call.meta?.[META_PAYMENT], clientAddress: call.clientAddress, signal: call.signal })
  } catch (error) {
    // the meter's 402 (past the quota, a refused payment or settlement): the tool's x402 result, the same body
    if (!(error instanceof PaymentRequiredError)) throw error
    const body = renderPaymentRequired(error.body).body as Record<string, unknown>
    const extensions = { ...(body.extensions as Record<string, unknown> | undefined), ...context.extensions }
    return paymentRequiredResult({ ...body, extensions })
  }
  if (answer.status >= 400) return errorResult(answer.body as { error: string; message: string })
  const header = answer.headers?.[HEADER_PAYMENT_RESPONSE]
  const settlement = typeof header === 'string' ? (decodeBase64Json(header, HEADER_PAYMENT_RESPONSE) as Record<string, unknown>) : undefined
  return okResult(answer.body as Record<string, unknown>, settlement)
}
