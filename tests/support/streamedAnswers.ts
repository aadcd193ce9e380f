/**
 * Streamed answers as each surface's public API sends them (Anthropic Messages, OpenAI Responses, OpenAI chat
 * completions, Ollama NDJSON), one entry per event, each marked with whether it carries generated content and
 * whether it carries the call's final usage — so a test can cut a stream anywhere and know what was sent.
 * Shapes follow the providers' documented event sequences (framing included), not only our model server's.
 */
export type StreamedEvent = { text: string; content: boolean; usage: boolean }

const sse = (value: Record<string, unknown>, named = true): string => `${named ? `event: ${String(value.type)}\n` : ''}data: ${JSON.stringify(value)}\n\n`
const ev = (text: string, content = false, usage = false): StreamedEvent => ({ text, content, usage })

/** `/v1/messages`: a thinking block, a text block of `words` deltas, a tool_use block streamed in two JSON parts. */
export function messagesStream(words: number): StreamedEvent[] {
  const m = (v: Record<string, unknown>, content = false, usage = false) => ev(sse(v), content, usage)
  return [
    // Anthropic's message_start says output_tokens 1 before anything was generated: not a final count.
    m({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, usage: { input_tokens: 9, output_tokens: 1 } } }),
    m({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    m({ type: 'ping' }),
    m({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me' } }, true),
    m({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: ' think' } }, true),
    m({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM' } }),
    m({ type: 'content_block_stop', index: 0 }),
    m({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
    // generated text that looks like framing is still one piece of text
    ...Array.from({ length: words }, (_, i) => m({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: i === 1 ? '"type":"ping"\n\ndata: {}' : ` w${i}` } }, true)),
    m({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '' } }),
    m({ type: 'content_block_stop', index: 1 }),
    m({ type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } }),
    m({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '' } }),
    m({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city": "Pa' } }, true),
    m({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: 'ris"}' } }, true),
    m({ type: 'content_block_stop', index: 2 }),
    m({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: words + 12 } }, false, true),
    m({ type: 'message_stop' }),
  ]
}

/** `/v1/responses`: reasoning (text and summary), a message of `words` deltas, a function call in two parts. */
export function responsesStream(words: number): StreamedEvent[] {
  let seq = 0
  const r = (type: string, fields: Record<string, unknown> = {}, content = false, usage = false) => ev(sse({ type, sequence_number: seq++, ...fields }), content, usage)
  const response = (status: string, usage: unknown) => ({ id: 'resp_1', object: 'response', status, model: 'm', output: [], usage })
  return [
    r('response.created', { response: response('in_progress', null) }),
    // a server that reports zeros while the call runs: not what it produced
    r('response.in_progress', { response: response('in_progress', { input_tokens: 9, output_tokens: 0, total_tokens: 9 }) }),
    r('response.output_item.added', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } }),
    r('response.reasoning_summary_part.added', { item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } }),
    r('response.reasoning_summary_text.delta', { item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Thinking' }, true),
    r('response.reasoning_summary_text.done', { item_id: 'rs_1', output_index: 0, summary_index: 0, text: 'Thinking' }),
    r('response.reasoning_text.delta', { item_id: 'rs_1', output_index: 0, content_index: 0, delta: 'hmm' }, true),
    r('response.reasoning_text.done', { item_id: 'rs_1', output_index: 0, content_index: 0, text: 'hmm' }),
    r('response.output_item.done', { output_index: 0, item: { type: 'reasoning', id: 'rs_1', summary: [] } }),
    r('response.output_item.added', { output_index: 1, item: { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant', content: [] } }),
    r('response.content_part.added', { item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } }),
    ...Array.from({ length: words }, (_, i) => r('response.output_text.delta', { item_id: 'msg_1', output_index: 1, content_index: 0, delta: ` w${i}`, logprobs: [] }, true)),
    r('response.output_text.done', { item_id: 'msg_1', output_index: 1, content_index: 0, text: '…', logprobs: [] }),
    r('response.content_part.done', { item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: '…', annotations: [] } }),
    r('response.output_item.done', { output_index: 1, item: { type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [] } }),
    r('response.output_item.added', { output_index: 2, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '', status: 'in_progress' } }),
    r('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 2, delta: '{"city":' }, true),
    r('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 2, delta: '"Paris"}' }, true),
    r('response.function_call_arguments.done', { item_id: 'fc_1', output_index: 2, arguments: '{"city":"Paris"}' }),
    r('response.output_item.done', { output_index: 2, item: { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' } }),
    r('response.completed', { response: response('completed', { input_tokens: 9, output_tokens: words + 8, total_tokens: words + 17 }) }, false, true),
  ]
}

/**
 * `/v1/chat/completions` with `stream_options.include_usage` (every chunk then says `usage: null`): the
 * role-only first chunk, reasoning, `words` content chunks, a tool call (name, then arguments in two parts), the
 * `finish_reason` chunk, the usage chunk (empty `choices`), `[DONE]`.
 */
export function chatCompletionsStream(words: number): StreamedEvent[] {
  const c = (delta: Record<string, unknown>, content = false, finish: string | null = null) =>
    ev(sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null }, false), content)
  const call = (fn: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ tool_calls: [{ index: 0, ...extra, function: fn }] })
  return [
    c({ role: 'assistant', content: '', refusal: null }),
    c({ reasoning_content: 'hmm' }, true),
    ...Array.from({ length: words }, (_, i) => c({ content: ` w${i}` }, true)),
    c(call({ name: 'get_weather', arguments: '' }, { id: 'call_1', type: 'function' }), true),
    c(call({ arguments: '{"city":' }), true),
    c(call({ arguments: '"Paris"}' }), true),
    c({}, false, 'tool_calls'),
    ev(sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 9, completion_tokens: words + 10, total_tokens: words + 19 } }, false), false, true),
    ev('data: [DONE]\n\n'),
  ]
}

/** Ollama `/api/chat` NDJSON: thinking, `words` content lines, a tool call, an empty line, the `done` line. */
export function ollamaChatStream(words: number): StreamedEvent[] {
  const line = (message: Record<string, unknown>, content = false) => ev(`${JSON.stringify({ model: 'm', created_at: 't', message: { role: 'assistant', content: '', ...message }, done: false })}\n`, content)
  return [
    line({ thinking: 'hmm' }, true),
    ...Array.from({ length: words }, (_, i) => line({ content: ` w${i}` }, true)),
    line({ tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] }, true),
    line({}),
    ev(`${JSON.stringify({ model: 'm', created_at: 't', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 9, eval_count: words + 9 })}\n`, false, true),
  ]
}

/** Ollama `/api/generate` NDJSON (and the gateway's `/llm/completion` chunks): thinking, `words` pieces, an empty one, `done`. */
export function ollamaGenerateStream(words: number): StreamedEvent[] {
  const line = (fields: Record<string, unknown>, content = false) => ev(`${JSON.stringify({ model: 'm', created_at: 't', response: '', ...fields, done: false })}\n`, content)
  return [
    line({ thinking: 'hmm' }, true),
    ...Array.from({ length: words }, (_, i) => line({ response: ` w${i}` }, true)),
    // a piece that decodes to nothing yet (a special token, half a UTF-8 character): nothing sent
    line({}),
    ev(`${JSON.stringify({ model: 'm', created_at: 't', response: '', done: true, prompt_eval_count: 9, eval_count: words + 1 })}\n`, false, true),
  ]
}

/** The events before the first one that carries the final usage: the stream cut just before it. */
export const beforeUsage = (events: StreamedEvent[]): StreamedEvent[] => events.slice(0, events.findIndex((e) => e.usage))
