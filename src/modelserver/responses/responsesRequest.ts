import type { ChatBody } from '../http/requestBodies.js'
import type { ResponsesInputItem, ResponsesInputPart, ResponsesRequest } from '../../../generated/modelserver/types.gen.js'
import type { ChatMessage, EngineFormat, ThinkOption, ToolCall, ToolChoice, ToolDefinition } from '../engine/Engine.js'
import { invalidParam } from '../openai/openaiError.js'

/** A Responses API request as the `/api/chat` request it stands for, and whether a tool call is required. */
export type ResponsesChat = { request: ChatBody; toolChoice: ToolChoice }

/**
 * `POST /v1/responses` → `/api/chat` (stateless, as Ollama 0.33): `instructions` → system message, `input` (a
 * string, or items: messages, `function_call`, `function_call_output`; `reasoning` items skipped) → messages,
 * `tools` filtered by `tool_choice`, `text.format` → `format`, `reasoning.effort` → `think`, sampling → options.
 */
export function toResponsesChat(body: ResponsesRequest): ResponsesChat {
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    throw invalidParam('previous_response_id', 'previous_response_id is not supported: this server is stateless (store is ignored); send the whole conversation in input')
  }
  const messages: ChatMessage[] = []
  if (body.instructions) messages.push({ role: 'system', content: body.instructions })
  const input = body.input ?? ''
  if (typeof input === 'string') messages.push({ role: 'user', content: input })
  else {
    const callNames = new Map<string, string>()
    input.forEach((item, i) => addItem(messages, item, `input[${i}]`, callNames))
  }
  if (messages.every((m) => m.role === 'system')) throw invalidParam('input', 'input must contain at least one message')
  const { tools, toolChoice } = toolsOf(body)
  const format = formatOf(body.text?.format)
  const think = thinkOf(body.reasoning?.effort)
  const options: Record<string, unknown> = {}
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) options.num_predict = body.max_output_tokens
  if (body.temperature !== undefined && body.temperature !== null) options.temperature = body.temperature
  if (body.top_p !== undefined && body.top_p !== null) options.top_p = body.top_p
  if (body.seed !== undefined) options.seed = body.seed
  return {
    request: {
      model: body.model,
      messages: messages as ChatBody['messages'],
      stream: body.stream === true,
      options,
      ...(tools.length > 0 ? { tools: tools as ChatBody['tools'] } : {}),
      ...(format !== undefined ? { format: format as ChatBody['format'] } : {}),
      ...(think !== undefined ? { think } : {}),
    },
    toolChoice,
  }
}

function addItem(messages: ChatMessage[], item: ResponsesInputItem, at: string, callNames: Map<string, string>): void {
  const type = item.type ?? 'message'
  if (type === 'reasoning') return
  if (type === 'function_call') {
    if (!item.call_id || !item.name) throw invalidParam(at, 'a function_call item needs call_id and name')
    callNames.set(item.call_id, item.name)
    const call: ToolCall = { type: 'function', function: { name: item.name, arguments: parseArguments(item.arguments ?? '', `${at}.arguments`) } }
    const last = messages[messages.length - 1]
    // Parallel calls arrive as consecutive items: one assistant turn.
    if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push({ ...call, function: { ...call.function, index: last.tool_calls.length } })
    else messages.push({ role: 'assistant', content: '', tool_calls: [{ ...call, function: { ...call.function, index: 0 } }] })
    return
  }
  if (type === 'function_call_output') {
    if (!item.call_id) throw invalidParam(at, 'a function_call_output item needs call_id')
    const name = callNames.get(item.call_id)
    const { text } = contentOf(item.output, `${at}.output`)
    messages.push({ role: 'tool', content: text, ...(name ? { tool_name: name } : {}) })
    return
  }
  if (!item.role) throw invalidParam(`${at}.role`, 'a message item needs a role')
  const { text, images } = contentOf(item.content, `${at}.content`)
  if (item.role === 'system' || item.role === 'developer') messages.push({ role: 'system', content: text })
  else if (item.role === 'assistant') messages.push({ role: 'assistant', content: text })
  else messages.push({ role: 'user', content: text, ...(images.length > 0 ? { images } : {}) })
}

/** Text parts joined; `input_image` parts must be `data:` URLs (this server fetches nothing), their base64 kept. */
function contentOf(content: ResponsesInputItem['content'], at: string): { text: string; images: string[] } {
  if (content === undefined) return { text: '', images: [] }
  if (typeof content === 'string') return { text: content, images: [] }
  const texts: string[] = []
  const images: string[] = []
  content.forEach((part: ResponsesInputPart, k) => {
    if (part.type === 'input_image') {
      const match = /^data:image\/[a-z0-9.+-]+;base64,(.+)$/i.exec(part.image_url ?? '')
      if (!match) throw invalidParam(`${at}[${k}].image_url`, 'image_url must be a data:image/...;base64, URL')
      images.push(match[1]!)
    } else texts.push(part.text ?? '')
  })
  return { text: texts.join('\n'), images }
}

function parseArguments(text: string, at: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text === '' ? '{}' : text)
  } catch {
    throw invalidParam(at, 'function call arguments must be a JSON object')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidParam(at, 'function call arguments must be a JSON object')
  return value as Record<string, unknown>
}

/** `none` offers no tools; a named function only that one, required; `required` all, required; `auto` all. */
function toolsOf(body: ResponsesRequest): { tools: ToolDefinition[]; toolChoice: ToolChoice } {
  const tools: ToolDefinition[] = (body.tools ?? []).map((t) => ({
    type: 'function',
    function: {
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      ...(t.parameters ? { parameters: t.parameters } : {}),
    },
  }))
  const choice = body.tool_choice
  if (choice === 'none') return { tools: [], toolChoice: 'auto' }
  if (choice !== undefined && typeof choice === 'object') {
    const named = tools.filter((t) => t.function.name === choice.name)
    if (named.length === 0) throw invalidParam('tool_choice', `tool_choice names "${choice.name}", which is not in tools`)
    return { tools: named, toolChoice: 'required' }
  }
  if (choice === 'required' && tools.length === 0) throw invalidParam('tool_choice', 'tool_choice required needs tools')
  return { tools, toolChoice: choice === 'required' ? 'required' : 'auto' }
}

function formatOf(format: NonNullable<ResponsesRequest['text']>['format']): EngineFormat | undefined {
  if (!format || format.type === 'text') return undefined
  if (format.type === 'json_object') return 'json'
  if (!format.schema) throw invalidParam('text.format.schema', 'text.format json_schema needs schema')
  return format.schema
}

function thinkOf(effort: string | null | undefined): ThinkOption | undefined {
  if (effort === undefined || effort === null) return undefined
  if (effort === 'none') return false
  if (effort === 'minimal') return 'low'
  if (effort === 'xhigh') return 'max'
  return effort as ThinkOption
}
