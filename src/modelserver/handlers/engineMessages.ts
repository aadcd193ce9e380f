import type { ChatMessage, ToolCall } from '../engine/Engine.js'
import type { ChatBody } from '../http/requestBodies.js'

type RequestMessage = NonNullable<ChatBody['messages']>[number]
type RequestToolCall = NonNullable<RequestMessage['tool_calls']>[number]

/**
 * `/api/chat` messages as the engine reads them. Ollama's Go decoder leaves an absent or `null` member at its zero
 * value, so a message without content is an empty one and a tool call without a name or arguments calls `""`
 * with `{}`; the body reaches here with those members absent (`nullAsAbsent.ts`) and they are filled in once.
 */
export function engineMessages(messages: readonly RequestMessage[]): ChatMessage[] {
  return messages.map(({ content, tool_calls, ...rest }) => ({
    ...rest,
    content: content ?? '',
    ...(tool_calls ? { tool_calls: tool_calls.map(engineToolCall) } : {}),
  }))
}

function engineToolCall(call: RequestToolCall): ToolCall {
  const f = call.function ?? {}
  return {
    ...(call.type ? { type: call.type } : {}),
    function: { ...(f.index !== undefined ? { index: f.index } : {}), name: f.name ?? '', arguments: f.arguments ?? {} },
  }
}
