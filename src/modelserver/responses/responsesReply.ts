import type { ResponsesRequest } from '../../../generated/modelserver/types.gen.js'
import type { GenerationResult, ToolCall } from '../engine/Engine.js'
import type { ReplyShape } from '../handlers/generation.js'
import type { FinalMetrics } from '../handlers/runGeneration.js'
import { namedSseFraming } from '../http/sseFraming.js'
import { prefixedId, toolCallId, unixNow } from '../openai/replyIds.js'

type OutputItem =
  | { type: 'message'; id: string; status: 'in_progress' | 'completed'; role: 'assistant'; content: { type: 'output_text'; text: string; annotations: [] }[] }
  | { type: 'reasoning'; id: string; summary: []; content: { type: 'reasoning_text'; text: string }[] }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: 'in_progress' | 'completed' }

type Event = Record<string, unknown> & { type: string }

/**
 * `/v1/responses` replies: the `response` object, or its events in the order OpenAI sends them —
 * `response.created`, `response.in_progress`, then per output item (reasoning, message, function call, in the
 * order the model produced them) `response.output_item.added`, its part and delta events and
 * `response.output_item.done`, and last `response.completed` (or `response.incomplete` when `max_output_tokens`
 * cut it). Every event carries `sequence_number`.
 */
export function responsesReply(body: ResponsesRequest): ReplyShape {
  const id = prefixedId('resp')
  const createdAt = unixNow()
  let sequence = 0
  const event = (type: string, fields: Record<string, unknown> = {}): Event => ({ type, sequence_number: sequence++, ...fields })
  const response = (status: ResponseStatus, output: OutputItem[], m?: FinalMetrics) => responseObject(body, { id, createdAt, status, output }, m)
  const statusOf = (result: GenerationResult) => (result.doneReason === 'length' && !(result.toolCalls && result.toolCalls.length > 0) ? 'incomplete' : 'completed')

  // Streaming state: the items completed so far and the one being written.
  const output: OutputItem[] = []
  let open: { kind: 'message' | 'reasoning'; id: string; index: number; text: string } | undefined
  let started = false
  const start = (): Event[] => {
    if (started) return []
    started = true
    return [event('response.created', { response: response('in_progress', []) }), event('response.in_progress', { response: response('in_progress', []) })]
  }
  const close = (): Event[] => {
    if (!open) return []
    const { kind, id: itemId, index, text } = open
    open = undefined
    const at = { item_id: itemId, output_index: index, content_index: 0 }
    if (kind === 'message') {
      const part = { type: 'output_text' as const, text, annotations: [] as [] }
      const item: OutputItem = { type: 'message', id: itemId, status: 'completed', role: 'assistant', content: [part] }
      output.push(item)
      return [event('response.output_text.done', { ...at, text, logprobs: [] }), event('response.content_part.done', { ...at, part }), event('response.output_item.done', { output_index: index, item })]
    }
    const part = { type: 'reasoning_text' as const, text }
    const item: OutputItem = { type: 'reasoning', id: itemId, summary: [], content: [part] }
    output.push(item)
    return [event('response.reasoning_text.done', { ...at, text }), event('response.content_part.done', { ...at, part }), event('response.output_item.done', { output_index: index, item })]
  }
  const openItem = (kind: 'message' | 'reasoning'): Event[] => {
    if (open?.kind === kind) return []
    const frames = close()
    const itemId = prefixedId(kind === 'message' ? 'msg' : 'rs')
    open = { kind, id: itemId, index: output.length, text: '' }
    const at = { item_id: itemId, output_index: open.index, content_index: 0 }
    if (kind === 'message') {
      frames.push(
        event('response.output_item.added', { output_index: open.index, item: { type: 'message', id: itemId, status: 'in_progress', role: 'assistant', content: [] } }),
        event('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] } }),
      )
    } else {
      frames.push(
        event('response.output_item.added', { output_index: open.index, item: { type: 'reasoning', id: itemId, summary: [], content: [] } }),
        event('response.content_part.added', { ...at, part: { type: 'reasoning_text', text: '' } }),
      )
    }
    return frames
  }

  return {
    framing: namedSseFraming((message) => event('error', { code: null, message, param: null })),
    // OpenAI's API answers a stream at once: the status when generation starts, the events as they come.
    headersAtStart: true,
    chunk: (piece) => {
      const frames = start()
      if (piece.toolCalls) {
        frames.push(...close())
        for (const call of piece.toolCalls) {
          const item = callItem(call)
          const index = output.length
          output.push(item)
          frames.push(
            event('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } }),
            event('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: item.arguments }),
            event('response.function_call_arguments.done', { item_id: item.id, output_index: index, name: item.name, arguments: item.arguments }),
            event('response.output_item.done', { output_index: index, item }),
          )
        }
      } else if (piece.thinking) {
        frames.push(...openItem('reasoning'))
        open!.text += piece.thinking
        frames.push(event('response.reasoning_text.delta', { item_id: open!.id, output_index: open!.index, content_index: 0, delta: piece.thinking }))
      } else if (piece.content) {
        frames.push(...openItem('message'))
        open!.text += piece.content
        frames.push(event('response.output_text.delta', { item_id: open!.id, output_index: open!.index, content_index: 0, delta: piece.content, logprobs: [] }))
      }
      return frames.length > 0 ? frames : undefined
    },
    final: (result, m) => response(statusOf(result), wholeOutput(result), m),
    finalFrames: (result, m) => {
      const frames = start()
      // A reply with no text and no call still has its (empty) message, as OpenAI sends one.
      if (output.length === 0 && !open) frames.push(...openItem('message'))
      frames.push(...close())
      const status = statusOf(result)
      frames.push(event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: response(status, output, m) }))
      return frames
    },
  }
}

type ResponseStatus = 'in_progress' | 'completed' | 'incomplete'

/** The `response` object: what was asked echoed back, the output so far, and the usage once it is known. */
function responseObject(body: ResponsesRequest, r: { id: string; createdAt: number; status: ResponseStatus; output: OutputItem[] }, m?: FinalMetrics) {
  const { id, createdAt, status, output } = r
  const text = output.flatMap((o) => (o.type === 'message' ? o.content.map((c) => c.text) : [])).join('')
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status,
    model: body.model,
    output,
    ...(status !== 'in_progress' ? { output_text: text } : {}),
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    tools: body.tools ?? [],
    tool_choice: body.tool_choice ?? 'auto',
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    temperature: body.temperature ?? null,
    top_p: body.top_p ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    text: body.text ?? { format: { type: 'text' } },
    reasoning: body.reasoning ?? null,
    store: false,
    previous_response_id: null,
    metadata: body.metadata ?? {},
    ...(m ? { usage: usageOf(m) } : {}),
  }
}

/** A tool call as a `function_call` output item. */
function callItem(call: ToolCall): OutputItem & { type: 'function_call' } {
  return {
    type: 'function_call',
    id: prefixedId('fc'),
    call_id: toolCallId(),
    name: call.function.name,
    arguments: JSON.stringify(call.function.arguments ?? {}),
    status: 'completed',
  }
}

/** A whole (not streamed) generation's output items: its reasoning, its message (also when empty without calls), its calls. */
function wholeOutput(result: GenerationResult): OutputItem[] {
  const items: OutputItem[] = []
  if (result.thinking) items.push({ type: 'reasoning', id: prefixedId('rs'), summary: [], content: [{ type: 'reasoning_text', text: result.thinking }] })
  const calls = result.toolCalls ?? []
  if (result.content || calls.length === 0) {
    items.push({ type: 'message', id: prefixedId('msg'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: result.content, annotations: [] }] })
  }
  for (const call of calls) items.push(callItem(call))
  return items
}

function usageOf(m: FinalMetrics) {
  return {
    input_tokens: m.prompt_eval_count,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: m.eval_count,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: m.prompt_eval_count + m.eval_count,
  }
}
