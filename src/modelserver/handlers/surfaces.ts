import type { HttpResult, RequestContext } from '../../shared/http/index.js'
import type { MessagesRequest, ResponsesRequest } from '../../../generated/modelserver/types.gen.js'
import { toMessagesChat } from '../anthropic/messagesRequest.js'
import { messagesReply } from '../anthropic/messagesReply.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { toResponsesChat } from '../responses/responsesRequest.js'
import { responsesReply } from '../responses/responsesReply.js'
import { chat } from './generation.js'

/**
 * The Responses and Messages APIs (Ollama 0.33): each request is translated to the `/api/chat` request it stands
 * for and runs through the same handler core (engine, residency, queue, metrics, abort on disconnect); only the
 * reply's shape differs, and `tool_choice` reaches the engine, which enforces it.
 */
export function openaiResponses(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as ResponsesRequest
  const { request, toolChoice } = toResponsesChat(body)
  return chat(ctx, req, responsesReply(body), request, { toolChoice })
}

export function anthropicMessages(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as MessagesRequest
  const { request, toolChoice, thinkWhenCapable } = toMessagesChat(body)
  return chat(ctx, req, messagesReply(body.model), request, { toolChoice, thinkWhenCapable })
}
