import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse } from 'node-llama-cpp'
import type { ChatMessage } from './Engine.js'
import { EngineError } from './errors.js'

/**
 * Ollama messages → node-llama-cpp chat history.
 *
 * An assistant message's `tool_calls` become function calls inside the model response; the `tool`
 * messages that follow supply their results (matched by `tool_name`, else in order). An assistant message
 * that follows tool results continues the same model response, as node-llama-cpp expects. The history
 * always ends with a model response — empty for a new answer, or the last assistant/tool turn, which the
 * model then continues.
 */
export function toChatHistory(messages: ChatMessage[], options: { withThinking: boolean }): ChatHistoryItem[] {
  const items: ChatHistoryItem[] = []
  let pendingCalls: ChatModelFunctionCall[] = []

  const lastModel = (): ChatModelResponse | undefined => {
    const last = items[items.length - 1]
    return last?.type === 'model' ? last : undefined
  }

  for (const m of messages) {
    switch (m.role) {
      case 'system':
        pendingCalls = []
        items.push({ type: 'system', text: m.content })
        break
      case 'user':
        pendingCalls = []
        items.push({ type: 'user', text: m.content })
        break
      case 'assistant': {
        const continuing = lastModel()
        const continues = continuing !== undefined && continuing.response.some((r) => typeof r === 'object' && r.type === 'functionCall')
        const response: ChatModelResponse['response'] = continues ? continuing.response : []
        if (options.withThinking && m.thinking) {
          response.push({ type: 'segment', segmentType: 'thought', text: m.thinking, ended: true })
        }
        if (m.content) response.push(m.content)
        pendingCalls = []
        for (const call of m.tool_calls ?? []) {
          const fc: ChatModelFunctionCall = {
            type: 'functionCall',
            name: call.function.name,
            params: call.function.arguments ?? {},
            result: '',
            startsNewChunk: pendingCalls.length === 0 ? true : undefined,
          }
          pendingCalls.push(fc)
          response.push(fc)
        }
        if (!continues) items.push({ type: 'model', response })
        break
      }
      case 'tool': {
        const idx = pendingCalls.findIndex((c) => c.result === '' && (!m.tool_name || c.name === m.tool_name))
        const target = idx >= 0 ? pendingCalls[idx] : pendingCalls.find((c) => c.result === '')
        if (target) {
          target.result = m.content
        } else {
          // A tool result without a matching call: keep it as user-visible context.
          items.push({ type: 'user', text: m.tool_name ? `[${m.tool_name} result] ${m.content}` : m.content })
        }
        break
      }
      default:
        throw new EngineError('invalid_options', `invalid message role ${(m as { role: string }).role}`)
    }
  }
  const last = items[items.length - 1]
  if (last?.type !== 'model') items.push({ type: 'model', response: [] })
  return items
}
