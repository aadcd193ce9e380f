import type { ChatBody } from '../http/requestBodies.js'
import type { AnthropicContentBlock, MessagesRequest } from '../../../generated/modelserver/types.gen.js'
import type { ChatMessage, ToolCall, ToolChoice, ToolDefinition } from '../engine/Engine.js'
import { badRequest } from '../errors.js'

/** An Anthropic Messages request as the `/api/chat` request it stands for, and what Ollama's body cannot say. */
export type MessagesChat = { request: ChatBody; toolChoice: ToolChoice; thinkWhenCapable: boolean }

/**
 * `POST /v1/messages` → `/api/chat`: `system` → system message; each message's blocks → text, images (base64
 * sources), an assistant's `tool_use` → tool calls and `thinking` → its thinking, a user's `tool_result` → a
 * `tool` message named after the call its `tool_use_id` answers (before the user's own text, which follows the
 * results); `tools` filtered by `tool_choice`; `thinking` enabled → think when the model can; sampling → options.
 */
export function toMessagesChat(body: MessagesRequest): MessagesChat {
  const messages: ChatMessage[] = []
  const system = typeof body.system === 'string' ? body.system : (body.system ?? []).map((b) => b.text ?? '').join('\n')
  if (system) messages.push({ role: 'system', content: system })
  const callNames = new Map<string, string>()
  body.messages.forEach((m, i) => {
    const blocks: AnthropicContentBlock[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content
    if (m.role === 'assistant') messages.push(assistantMessage(blocks, callNames))
    else messages.push(...userMessages(blocks, `messages[${i}]`, callNames))
  })
  const { tools, toolChoice } = toolsOf(body)
  const options: Record<string, unknown> = { num_predict: body.max_tokens }
  if (body.temperature !== undefined) options.temperature = body.temperature
  if (body.top_p !== undefined) options.top_p = body.top_p
  if (body.top_k !== undefined) options.top_k = body.top_k
  if (body.stop_sequences && body.stop_sequences.length > 0) options.stop = body.stop_sequences
  if (body.seed !== undefined) options.seed = body.seed
  const thinking = body.thinking?.type
  return {
    request: {
      model: body.model,
      messages: messages as ChatBody['messages'],
      stream: body.stream === true,
      options,
      ...(tools.length > 0 ? { tools: tools as ChatBody['tools'] } : {}),
      // Thinking switched off explicitly keeps a thinking model from thinking; otherwise its default.
      ...(thinking === 'disabled' ? { think: false } : {}),
    },
    toolChoice,
    thinkWhenCapable: thinking === 'enabled' || thinking === 'adaptive',
  }
}

function assistantMessage(blocks: AnthropicContentBlock[], callNames: Map<string, string>): ChatMessage {
  const texts: string[] = []
  const thoughts: string[] = []
  const calls: ToolCall[] = []
  for (const b of blocks) {
    if (b.type === 'text') texts.push(b.text ?? '')
    else if (b.type === 'thinking') thoughts.push(b.thinking ?? '')
    else if (b.type === 'tool_use') {
      if (b.id && b.name) callNames.set(b.id, b.name)
      calls.push({ type: 'function', function: { index: calls.length, name: b.name ?? '', arguments: (b.input ?? {}) as Record<string, unknown> } })
    }
  }
  return {
    role: 'assistant',
    content: texts.join('\n'),
    ...(thoughts.length > 0 ? { thinking: thoughts.join('\n') } : {}),
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  }
}

function userMessages(blocks: AnthropicContentBlock[], at: string, callNames: Map<string, string>): ChatMessage[] {
  const results: ChatMessage[] = []
  const texts: string[] = []
  const images: string[] = []
  blocks.forEach((b, k) => {
    if (b.type === 'text') texts.push(b.text ?? '')
    else if (b.type === 'image') {
      if (b.source?.type !== 'base64' || !b.source.data) throw badRequest(`${at}.content[${k}]: image source must be base64 (this server fetches nothing)`)
      images.push(b.source.data)
    } else if (b.type === 'tool_result') {
      const name = b.tool_use_id !== undefined ? callNames.get(b.tool_use_id) : undefined
      const content = typeof b.content === 'string' ? b.content : (b.content ?? []).map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n')
      results.push({ role: 'tool', content, ...(name ? { tool_name: name } : {}) })
    } else if (b.type === 'document') throw badRequest(`${at}.content[${k}]: document blocks are not supported`)
  })
  const user: ChatMessage[] = texts.length > 0 || images.length > 0 || results.length === 0 ? [{ role: 'user', content: texts.join('\n'), ...(images.length > 0 ? { images } : {}) }] : []
  return [...results, ...user]
}

/** `none` offers no tools; `tool` only the named one, required; `any` all, required; `auto` all. */
function toolsOf(body: MessagesRequest): { tools: ToolDefinition[]; toolChoice: ToolChoice } {
  const tools: ToolDefinition[] = (body.tools ?? []).map((t) => ({
    type: 'function',
    function: { name: t.name, ...(t.description ? { description: t.description } : {}), parameters: t.input_schema },
  }))
  const choice = body.tool_choice
  if (!choice || choice.type === 'auto') return { tools, toolChoice: 'auto' }
  if (choice.type === 'none') return { tools: [], toolChoice: 'auto' }
  if (tools.length === 0) throw badRequest(`tool_choice ${choice.type} needs tools`)
  if (choice.type === 'any') return { tools, toolChoice: 'required' }
  const named = tools.filter((t) => t.function.name === choice.name)
  if (named.length === 0) throw badRequest(`tool_choice names "${choice.name ?? ''}", which is not in tools`)
  return { tools: named, toolChoice: 'required' }
}
