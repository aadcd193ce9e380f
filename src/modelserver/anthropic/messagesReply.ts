import type { GenerationResult, ToolCall } from '../engine/Engine.js'
import type { ReplyShape } from '../handlers/generation.js'
import type { FinalMetrics } from '../handlers/runGeneration.js'
import { namedSseFraming } from '../http/sseFraming.js'
import { prefixedId } from '../openai/replyIds.js'
import { anthropicErrorBody } from './anthropicError.js'

type Block =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }

type Event = Record<string, unknown> & { type: string }

function stopReasonOf(result: GenerationResult): 'tool_use' | 'max_tokens' | 'end_turn' {
  if (result.toolCalls && result.toolCalls.length > 0) return 'tool_use'
  return result.doneReason === 'length' ? 'max_tokens' : 'end_turn'
}

const toolUse = (call: ToolCall): Block => ({ type: 'tool_use', id: prefixedId('toolu'), name: call.function.name, input: call.function.arguments ?? {} })

/**
 * `/v1/messages` replies: the message, or its events as Anthropic streams them — `message_start`, `ping`, per
 * content block (thinking, text, tool use, in the order the model produced them) `content_block_start`, its
 * deltas and `content_block_stop`, then `message_delta` (stop reason, usage) and `message_stop`. The input token
 * count is known at the end only: `message_start` says 0 and `message_delta` the real count.
 */
export function messagesReply(model: string): ReplyShape {
  const id = prefixedId('msg')
  const message = (content: Block[], stopReason: string | null, usage: { input_tokens: number; output_tokens: number }) => ({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  })
  let started = false
  let index = 0
  let open: { kind: 'text' | 'thinking'; index: number } | undefined
  const start = (): Event[] => {
    if (started) return []
    started = true
    return [{ type: 'message_start', message: message([], null, { input_tokens: 0, output_tokens: 0 }) }, { type: 'ping' }]
  }
  const close = (): Event[] => {
    if (!open) return []
    const at = open.index
    open = undefined
    return [{ type: 'content_block_stop', index: at }]
  }
  const openBlock = (kind: 'text' | 'thinking'): Event[] => {
    if (open?.kind === kind) return []
    const frames = close()
    open = { kind, index: index++ }
    const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' }
    frames.push({ type: 'content_block_start', index: open.index, content_block: block })
    return frames
  }
  return {
    framing: namedSseFraming((text) => anthropicErrorBody(500, text)),
    // Anthropic's API answers a stream at once: the status when generation starts, the events as they come.
    headersAtStart: true,
    chunk: (piece) => {
      const frames = start()
      if (piece.toolCalls) {
        frames.push(...close())
        for (const call of piece.toolCalls) {
          const block = toolUse(call) as Block & { type: 'tool_use' }
          const at = index++
          frames.push(
            { type: 'content_block_start', index: at, content_block: { ...block, input: {} } },
            { type: 'content_block_delta', index: at, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
            { type: 'content_block_stop', index: at },
          )
        }
      } else if (piece.thinking) {
        frames.push(...openBlock('thinking'), { type: 'content_block_delta', index: open!.index, delta: { type: 'thinking_delta', thinking: piece.thinking } })
      } else if (piece.content) {
        frames.push(...openBlock('text'), { type: 'content_block_delta', index: open!.index, delta: { type: 'text_delta', text: piece.content } })
      }
      return frames.length > 0 ? frames : undefined
    },
    final: (result, m) => {
      const content: Block[] = []
      if (result.thinking) content.push({ type: 'thinking', thinking: result.thinking, signature: '' })
      if (result.content || !(result.toolCalls && result.toolCalls.length > 0)) content.push({ type: 'text', text: result.content })
      for (const call of result.toolCalls ?? []) content.push(toolUse(call))
      return message(content, stopReasonOf(result), usageOf(m))
    },
    finalFrames: (result, m) => [
      ...start(),
      ...close(),
      { type: 'message_delta', delta: { stop_reason: stopReasonOf(result), stop_sequence: null }, usage: usageOf(m) },
      { type: 'message_stop' },
    ],
  }
}

function usageOf(m: FinalMetrics) {
  return { input_tokens: m.prompt_eval_count, output_tokens: m.eval_count }
}
