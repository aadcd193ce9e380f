import { describe, expect, it } from 'vitest'
import {
  beforeUsage,
  chatCompletionsStream,
  messagesStream,
  ollamaChatStream,
  ollamaGenerateStream,
  responsesStream,
  type StreamedEvent,
} from '../../tests/support/streamedAnswers.js'
import { StreamUsageScanner } from './callUsage.js'
import { contentPiecesOf } from './contentPieces.js'

/** The scanner fed `events` as the network may split them (every 5 bytes). */
function scan(events: StreamedEvent[]): StreamUsageScanner {
  const s = new StreamUsageScanner()
  const bytes = new TextEncoder().encode(events.map((e) => e.text).join(''))
  for (let i = 0; i < bytes.length; i += 5) s.feed(bytes.subarray(i, i + 5))
  return s
}

const surfaces: [string, (words: number) => StreamedEvent[]][] = [
  ['Anthropic Messages', messagesStream],
  ['OpenAI Responses', responsesStream],
  ['OpenAI chat completions', chatCompletionsStream],
  ['Ollama chat', ollamaChatStream],
  ['Ollama generate', ollamaGenerateStream],
]

describe('a stream cut before its usage is counted by the content it sent, never by its framing', () => {
  for (const [surface, stream] of surfaces) {
    it(`${surface}: cut anywhere before the usage, the count is the content events sent`, () => {
      const events = beforeUsage(stream(12))
      const framing = events.filter((e) => !e.content).length
      expect(framing, 'the sequence has framing to leave out').toBeGreaterThan(0)
      for (let cut = 0; cut <= events.length; cut++) {
        const sent = events.slice(0, cut)
        const s = scan(sent)
        expect(s.usage.completionTokens, `${surface} cut at ${cut}`).toBeUndefined()
        expect(s.contentPieces, `${surface} cut at ${cut}`).toBe(sent.filter((e) => e.content).length)
      }
    })

    it(`${surface}: a whole stream reports its usage`, () => {
      const s = scan(stream(12))
      s.end()
      expect(s.usage.completionTokens).toBeGreaterThanOrEqual(12)
      expect(s.errored).toBe(false)
    })
  }

  it('/v1/messages with 12 words of text, 2 of thinking and a tool call in 2 parts counts 16, not its 27 events', () => {
    const events = beforeUsage(messagesStream(12))
    expect(events.length).toBe(27)
    expect(scan(events).contentPieces).toBe(16)
  })

  it('OpenAI text completions count each choice with text; n > 1 counts each choice', () => {
    const chunk = (texts: string[]) => ({ object: 'text_completion', choices: texts.map((text, index) => ({ text, index, finish_reason: null })) })
    expect(contentPiecesOf(chunk(['a']))).toBe(1)
    expect(contentPiecesOf(chunk(['']))).toBe(0)
    expect(contentPiecesOf(chunk(['a', 'b']))).toBe(2)
    expect(contentPiecesOf({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'a' } }, { index: 1, delta: { role: 'assistant' } }] })).toBe(1)
  })

  it('error events, unknown shapes and values that are not events count nothing', () => {
    for (const v of [
      { type: 'error', error: { type: 'overloaded_error', message: 'x' } },
      { error: { message: 'x' } },
      { error: 'modelserver_unavailable', message: 'gone' },
      { type: 'response.failed', response: { status: 'failed' } },
      { type: 'response.output_text.delta', delta: '' },
      { type: 'response.output_text.delta', delta: { text: 'not a string' } },
      { type: 'content_block_delta', delta: { type: 'citations_delta', citation: {} } },
      { type: 'content_block_delta', delta: 'text' },
      { choices: 'x' },
      { message: 'text' },
      [{ response: 'a' }],
      'text',
      null,
      7,
    ])
      expect(contentPiecesOf(v), JSON.stringify(v)).toBe(0)
  })

  it('an error line after content is not counted, and the stream is marked failed', () => {
    const s = scan([...beforeUsage(ollamaGenerateStream(3)), { text: '{"error":"modelserver_unavailable","message":"gone"}\n', content: false, usage: false }])
    expect(s.contentPieces).toBe(4)
    expect(s.errored).toBe(true)
  })
})
