import type { ReplyShape } from '../handlers/generation.js'
import { finishReasonOf, openaiStreamFraming, usageOf } from './chatCompletionReply.js'
import { completionId, SYSTEM_FINGERPRINT, unixNow } from './replyIds.js'

/** `/v1/completions` replies: one `text_completion` (usage), or streamed `text_completion` chunks then `[DONE]`. */
export function completionReply(model: string, includeUsage: boolean): ReplyShape {
  const id = completionId('cmpl')
  const created = unixNow()
  const envelope = (choices: unknown[]) => ({ id, object: 'text_completion', created, model, system_fingerprint: SYSTEM_FINGERPRINT, choices })
  const finish = (reason: string) => (reason === 'length' ? 'length' : 'stop')
  return {
    framing: openaiStreamFraming,
    chunk: (piece) => (piece.content ? envelope([{ text: piece.content, index: 0, finish_reason: null }]) : undefined),
    final: (result, m) => ({ ...envelope([{ text: result.content, index: 0, logprobs: null, finish_reason: finish(finishReasonOf(result)) }]), usage: usageOf(m) }),
    finalFrames: (result, m) => [
      envelope([{ text: '', index: 0, finish_reason: finish(finishReasonOf(result)) }]),
      ...(includeUsage ? [{ ...envelope([]), usage: usageOf(m) }] : []),
    ],
  }
}
