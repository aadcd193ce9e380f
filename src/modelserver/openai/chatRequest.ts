import type { ChatBody } from '../http/requestBodies.js'
import type {
  ChatCompletionMessage,
  ChatCompletionRequest,
  OpenAiContentPart,
} from '../../../generated/modelserver/types.gen.js'
import type { ChatMessage, EngineFormat, ThinkOption, ToolCall, ToolChoice, ToolDefinition } from '../engine/Engine.js'
import { invalidParam } from './openaiError.js'
import { optionsOf } from './sampling.js'

/**
 * An OpenAI chat completion request as the `/api/chat` request it stands for (Ollama's OpenAI compatibility):
 * messages (content parts → text and images; `developer` → `system`; tool calls' JSON arguments parsed; a `tool`
 * message named after the call its `tool_call_id` answers), `response_format` → `format`, `tools` filtered by
 * `tool_choice`, `reasoning_effort` → `think`, sampling fields → `options`.
 */
export function toChatRequest(body: ChatCompletionRequest): ChatBody {
  const callNames = new Map<string, string>()
  const messages = body.messages.map((m, i) => toChatMessage(m, `messages[${i}]`, callNames))
  const think = thinkOf(body.reasoning_effort)
  const format = formatOf(body.response_format)
  const tools = toolsOf(body)
  return {
    model: body.model,
    messages: messages as ChatBody['messages'],
    stream: body.stream === true,
    options: optionsOf(body),
    ...(tools.length > 0 ? { tools: tools as ChatBody['tools'] } : {}),
    ...(format !== undefined ? { format: format as ChatBody['format'] } : {}),
    ...(think !== undefined ? { think } : {}),
  }
}

function toChatMessage(m: ChatCompletionMessage, at: string, callNames: Map<string, string>): ChatMessage {
  const { text, images } = contentOf(m.content, `${at}.content`)
  switch (m.role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text }
    case 'user':
      return { role: 'user', content: text, ...(images.length > 0 ? { images } : {}) }
    case 'assistant': {
      const toolCalls: ToolCall[] = (m.tool_calls ?? []).map((c, j) => {
        callNames.set(c.id, c.function.name)
        return { type: 'function', function: { index: j, name: c.function.name, arguments: parseArguments(c.function.arguments, `${at}.tool_calls[${j}].function.arguments`) } }
      })
      return {
        role: 'assistant',
        content: text,
        ...(m.reasoning ? { thinking: m.reasoning } : {}),
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      }
    }
    case 'tool': {
      const name = (m.tool_call_id !== undefined ? callNames.get(m.tool_call_id) : undefined) ?? m.name
      return { role: 'tool', content: text, ...(name ? { tool_name: name } : {}) }
    }
  }
}

/** Text parts joined; image parts must be `data:` URLs (this server fetches nothing), their base64 kept. */
function contentOf(content: ChatCompletionMessage['content'], at: string): { text: string; images: string[] } {
  if (content === undefined || content === null) return { text: '', images: [] }
  if (typeof content === 'string') return { text: content, images: [] }
  const texts: string[] = []
  const images: string[] = []
  content.forEach((part: OpenAiContentPart, k) => {
    if (part.type === 'text') texts.push(part.text ?? '')
    else {
      const url = part.image_url?.url ?? ''
      const match = /^data:image\/[a-z0-9.+-]+;base64,(.+)$/i.exec(url)
      if (!match) throw invalidParam(`${at}[${k}].image_url.url`, 'image_url must be a data:image/...;base64, URL')
      images.push(match[1]!)
    }
  })
  return { text: texts.join('\n'), images }
}

function parseArguments(text: string, at: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text === '' ? '{}' : text)
  } catch {
    throw invalidParam(at, 'tool call arguments must be a JSON object')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalidParam(at, 'tool call arguments must be a JSON object')
  return value as Record<string, unknown>
}

function formatOf(format: ChatCompletionRequest['response_format']): EngineFormat | undefined {
  if (!format || format.type === 'text') return undefined
  if (format.type === 'json_object') return 'json'
  const schema = format.json_schema?.schema
  if (!schema) throw invalidParam('response_format.json_schema.schema', 'response_format json_schema needs json_schema.schema')
  return schema
}

/**
 * `none` offers no tools; a named function offers only that one; `auto` and `required` offer all (`required` and a
 * named function are then enforced: `requiredToolChoice`).
 */
function toolsOf(body: ChatCompletionRequest): ToolDefinition[] {
  const tools: ToolDefinition[] = (body.tools ?? []).map((t) => ({
    type: 'function',
    function: {
      name: t.function.name,
      ...(t.function.description !== undefined ? { description: t.function.description } : {}),
      ...(t.function.parameters !== undefined ? { parameters: t.function.parameters } : {}),
    },
  }))
  const choice = body.tool_choice
  if (choice === 'none') return []
  if (choice !== undefined && typeof choice === 'object') {
    const named = tools.filter((t) => t.function.name === choice.function.name)
    if (named.length === 0) throw invalidParam('tool_choice', `tool_choice names "${choice.function.name}", which is not in tools`)
    return named
  }
  return tools
}

/** `required` and a named function make the engine constrain generation to a call (of the tools offered). */
export function requiredToolChoice(choice: ChatCompletionRequest['tool_choice']): ToolChoice {
  return choice === 'required' || (choice !== undefined && typeof choice === 'object') ? 'required' : 'auto'
}

function thinkOf(effort: ChatCompletionRequest['reasoning_effort']): ThinkOption | undefined {
  if (effort === undefined || effort === null) return undefined
  if (effort === 'none') return false
  if (effort === 'minimal') return 'low'
  return effort
}
