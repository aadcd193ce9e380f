import type { GenerationResult, ToolCall } from '../engine/Engine.js'
import type { ReplyShape } from '../handlers/generation.js'
import type { FinalMetrics } from '../handlers/runGeneration.js'
import { sseFraming } from '../http/sseFraming.js'
import { openaiErrorBody } from './openaiError.js'
import { completionId, SYSTEM_FINGERPRINT, toolCallId, unixNow } from './replyIds.js'

export type FinishReason = 'stop' | 'length' | 'tool_calls'

export function finishReasonOf(result: GenerationResult): FinishReason {
  if (result.toolCalls && result.toolCalls.length > 0) return 'tool_calls'
  return result.doneReason === 'length' ? 'length' : 'stop'
}

export function usageOf(m: FinalMetrics) {
  return { prompt_tokens: m.prompt_eval_count, completion_tokens: m.eval_count, total_tokens: m.prompt_eval_count + m.eval_count }
}

/** The SSE framing of the `/v1` streams; a mid-stream failure is an OpenAI error event before `[DONE]`. */
export const openaiStreamFraming = sseFraming((message) => openaiErrorBody(500, message))

/**
 * `/v1/chat/completions` replies: `chat.completion` (one choice, usage) or `chat.completion.chunk` events —
 * content and reasoning deltas, a tool call whole in the chunk where the model completed it, a last chunk with
 * `finish_reason`, and with `include_usage` a chunk with empty `choices` and the usage.
 */
export function chatCompletionReply(model: string, includeUsage: boolean): ReplyShape {
  const id = completionId('chatcmpl')
  const created = unixNow()
  // A streamed call and the same call in the result get the same id.
  const ids: string[] = []
  const callId = (index: number) => (ids[index] ??= toolCallId())
  const openaiCalls = (calls: ToolCall[]) =>
    calls.map((c, i) => {
      const index = c.function.index ?? i
      return { id: callId(index), index, type: 'function' as const, function: { name: c.function.name, arguments: JSON.stringify(c.function.arguments ?? {}) } }
    })
  const envelope = (choices: unknown[]) => ({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: SYSTEM_FINGERPRINT, choices })
  return {
    framing: openaiStreamFraming,
    chunk: (piece) => {
      if (piece.toolCalls) return envelope([{ index: 0, delta: { role: 'assistant', content: '', tool_calls: openaiCalls(piece.toolCalls) }, finish_reason: null }])
      if (piece.thinking !== undefined) return envelope([{ index: 0, delta: { role: 'assistant', content: '', reasoning: piece.thinking }, finish_reason: null }])
      if (!piece.content) return undefined
      return envelope([{ index: 0, delta: { role: 'assistant', content: piece.content }, finish_reason: null }])
    },
    final: (result, m) => {
      const calls = result.toolCalls && result.toolCalls.length > 0 ? { tool_calls: openaiCalls(result.toolCalls) } : {}
      return {
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: result.content, ...(result.thinking ? { reasoning: result.thinking } : {}), ...calls },
            finish_reason: finishReasonOf(result),
          },
        ],
        usage: usageOf(m),
      }
    },
    finalFrames: (result, m) => [
      envelope([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: finishReasonOf(result) }]),
      ...(includeUsage ? [{ ...envelope([]), usage: usageOf(m) }] : []),
    ],
  }
}
