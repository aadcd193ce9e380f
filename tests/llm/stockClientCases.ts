/**
 * The stock-client cases, shared by the in-process test (tests/llm/stockClients.test.ts) and
 * the one against `npm start` (tests/system/stockClients.test.ts): `@anthropic-ai/sdk` (messages create, stream,
 * tools, `tool_choice`), `openai` `responses.create` and its stream, LangChain's `ChatAnthropic` and `ChatOpenAI`
 * with `useResponsesApi`. A call whose `tool_choice` names a function must return a call of that function.
 */
import Anthropic from '@anthropic-ai/sdk'
import { ChatAnthropic } from '@langchain/anthropic'
import { ChatOpenAI } from '@langchain/openai'
import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'

export const MODEL = 'svc-tiny-chat:latest'
const weatherParams = { type: 'object' as const, required: ['city'], properties: { city: { type: 'string' as const, description: 'City' } } }
const timeParams = { type: 'object' as const, required: ['zone'], properties: { zone: { type: 'string' as const, enum: ['UTC', 'CET'] } } }

/** Where the clients point: Anthropic's base (the SDK appends `/v1/messages`) and OpenAI's (it appends `/responses`). */
export type StockClientTarget = { name: string; anthropicBase: () => string; openaiBase: () => string }

/**
 * The stock-client cases, one `describe` per target. `apiKey` is read when a test runs (the caller's `beforeAll`
 * creates it): the gateway needs an `/llm` key, the model server ignores what the clients send.
 */
export function describeStockClients(targets: StockClientTarget[], apiKey: () => string): void {
  describe.each(targets)('stock clients against the $name', (target) => {
    const anthropic = () => new Anthropic({ baseURL: target.anthropicBase(), apiKey: apiKey(), maxRetries: 0 })
    const openai = () => new OpenAI({ baseURL: target.openaiBase(), apiKey: apiKey(), maxRetries: 0 })

    it('@anthropic-ai/sdk messages.create and messages.stream', async () => {
      const client = anthropic()
      // Greedy (temperature 0, which the Messages API takes; this SDK's types no longer list it, so it rides as an
      // extra body field): sampled, the random-weight tiny model now and then ends at once (no content block, 0
      // output tokens), which is a valid answer but not what this case is about.
      const greedy = { temperature: 0 } as Record<string, unknown>
      const message = await client.messages.create({ model: MODEL, max_tokens: 12, ...greedy, system: 'Be terse.', messages: [{ role: 'user', content: 'Hello!' }] })
      expect(message.type).toBe('message')
      expect(message.content[0]!.type).toBe('text')
      expect(message.usage.output_tokens).toBeGreaterThan(0)
      expect(message.usage.output_tokens).toBeLessThanOrEqual(12)

      const stream = client.messages.stream({ model: MODEL, max_tokens: 12, ...greedy, messages: [{ role: 'user', content: 'Hello!' }] })
      let text = ''
      stream.on('text', (delta) => (text += delta))
      const final = await stream.finalMessage()
      const block = final.content[0]!
      expect(block.type).toBe('text')
      expect(block.type === 'text' && block.text).toBe(text)
      expect(final.usage.input_tokens).toBeGreaterThan(0)
      expect(['end_turn', 'max_tokens']).toContain(final.stop_reason)
    })

    it('@anthropic-ai/sdk tools: tool_choice tool and any return a tool_use (of the named tool), streamed too', async () => {
      const client = anthropic()
      const tools = [
        { name: 'get_weather', description: 'Current weather for a city', input_schema: weatherParams },
        { name: 'get_time', description: 'Current time', input_schema: timeParams },
      ]
      const named = await client.messages.create({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'What time is it?' }], tools, tool_choice: { type: 'tool', name: 'get_weather' } })
      expect(named.stop_reason).toBe('tool_use')
      const use = named.content.find((b) => b.type === 'tool_use')
      expect(use?.type === 'tool_use' && use.name).toBe('get_weather')
      expect(typeof (use as { input: { city: unknown } }).input.city).toBe('string')

      const any = await client.messages.create({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'any' } })
      expect(any.content.some((b) => b.type === 'tool_use')).toBe(true)

      const stream = client.messages.stream({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }], tools, tool_choice: { type: 'tool', name: 'get_time' } })
      const final = await stream.finalMessage()
      const streamed = final.content.find((b) => b.type === 'tool_use')
      expect(streamed?.type === 'tool_use' && streamed.name).toBe('get_time')
      expect(['UTC', 'CET']).toContain((streamed as { input: { zone: string } }).input.zone)

      // The answer to the call goes back as a tool_result.
      const answer = await client.messages.create({
        model: MODEL,
        max_tokens: 8,
        tools,
        messages: [
          { role: 'user', content: 'What time is it?' },
          { role: 'assistant', content: final.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: (streamed as { id: string }).id, content: '12:00' }] },
        ],
      })
      expect(answer.type).toBe('message')
    })

    it('openai responses.create and its stream; tool_choice naming a function returns a call of it', async () => {
      const client = openai()
      const response = await client.responses.create({ model: MODEL, instructions: 'Be terse.', input: 'Hello!', max_output_tokens: 12 })
      expect(response.object).toBe('response')
      expect(typeof response.output_text).toBe('string')
      expect(response.usage!.output_tokens).toBeLessThanOrEqual(12)

      const stream = await client.responses.create({ model: MODEL, input: 'Hello!', max_output_tokens: 12, stream: true })
      const types: string[] = []
      let deltas = ''
      let completed: OpenAI.Responses.Response | undefined
      for await (const event of stream) {
        types.push(event.type)
        if (event.type === 'response.output_text.delta') deltas += event.delta
        if (event.type === 'response.completed' || event.type === 'response.incomplete') completed = event.response
      }
      expect(types[0]).toBe('response.created')
      expect(completed!.output_text ?? deltas).toBe(deltas)

      const helper = client.responses.stream({ model: MODEL, input: 'Hello!', max_output_tokens: 8 })
      const final = await helper.finalResponse()
      expect(final.object).toBe('response')

      const tools = [
        { type: 'function' as const, name: 'get_weather', description: 'Current weather for a city', parameters: weatherParams, strict: false },
        { type: 'function' as const, name: 'get_time', parameters: timeParams, strict: false },
      ]
      const called = await client.responses.create({ model: MODEL, input: 'What time is it?', tools, tool_choice: { type: 'function', name: 'get_weather' } })
      const call = called.output.find((o) => o.type === 'function_call')
      expect(call?.type === 'function_call' && call.name).toBe('get_weather')
      expect(typeof JSON.parse((call as { arguments: string }).arguments).city).toBe('string')
    })

    it('LangChain ChatAnthropic: invoke, stream, and bindTools with tool_choice naming a tool', async () => {
      // Greedy, as in the SDK case above: sampled, the tiny model now and then ends at once (0 output tokens).
      const model = new ChatAnthropic({ model: MODEL, apiKey: apiKey(), maxTokens: 16, temperature: 0, maxRetries: 0, clientOptions: { baseURL: target.anthropicBase() } })
      const reply = await model.invoke('Hello!')
      expect(typeof reply.content === 'string' || Array.isArray(reply.content)).toBe(true)
      expect(reply.usage_metadata?.output_tokens).toBeGreaterThan(0)
      let chunks = 0
      for await (const _chunk of await model.stream('Hello!')) chunks++
      expect(chunks).toBeGreaterThan(0)
      const withTools = new ChatAnthropic({ model: MODEL, apiKey: apiKey(), maxTokens: 256, maxRetries: 0, clientOptions: { baseURL: target.anthropicBase() } }).bindTools(
        [
          { type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: weatherParams } },
          { type: 'function', function: { name: 'get_time', description: 'Current time', parameters: timeParams } },
        ],
        { tool_choice: 'get_time' },
      )
      const called = await withTools.invoke('What is the weather in Paris?')
      expect(called.tool_calls?.map((c) => c.name)).toEqual(['get_time'])
      expect(['UTC', 'CET']).toContain(called.tool_calls![0]!.args.zone)
    })

    it('LangChain ChatOpenAI with useResponsesApi: invoke, stream, and bindTools with tool_choice naming a function', async () => {
      // Greedy (see above): the output-token assertions must not depend on a sampled first token.
      const make = (maxTokens: number) =>
        new ChatOpenAI({ model: MODEL, apiKey: apiKey(), maxTokens, temperature: 0, maxRetries: 0, useResponsesApi: true, configuration: { baseURL: target.openaiBase() } })
      const reply = await make(16).invoke('Hello!')
      expect(reply.usage_metadata?.output_tokens).toBeGreaterThan(0)
      let chunks = 0
      for await (const _chunk of await make(16).stream('Hello!')) chunks++
      expect(chunks).toBeGreaterThan(0)
      const withTools = make(256).bindTools(
        [
          { type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: weatherParams } },
          { type: 'function', function: { name: 'get_time', description: 'Current time', parameters: timeParams } },
        ],
        { tool_choice: 'get_weather' },
      )
      const called = await withTools.invoke('What time is it?')
      expect(called.tool_calls?.map((c) => c.name)).toEqual(['get_weather'])
      expect(typeof called.tool_calls![0]!.args.city).toBe('string')
    })
  })
}
