import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Ajv } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EngineModel, TokenChunk, ToolDefinition } from './Engine.js'
import { LlamaEngine } from './LlamaEngine.js'
import { EngineCapabilityError, EngineError, EngineInputTooLongError, engineErrorMessage } from './errors.js'
import { tinyChatModel } from '../gguf/tinyModels.js'
import { writeTestModels } from '../../../tests/support/writeTestModels.js'

const PRINTABLE = /^[\x20-\x7e\n]*$/

let engine: LlamaEngine
let chat: EngineModel
let embed: EngineModel
let paths: ReturnType<typeof writeTestModels>

beforeAll(async () => {
  paths = writeTestModels({
    plain: { tools: false, fim: false, toolCallNudge: undefined },
    thinker: { thinking: true },
    leveled: { thinking: true, thinkLevels: true },
  })
  engine = await LlamaEngine.create({ threads: 1 })
  chat = await engine.loadModel({ path: paths.chat, name: 'svc-tiny-chat:latest' })
  embed = await engine.loadModel({ path: paths.embed, name: 'svc-tiny-embed:latest' })
})

afterAll(async () => {
  await engine?.dispose()
})

const weatherTool: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', required: ['city'], properties: { city: { type: 'string', description: 'city name' } } },
  },
}

describe('loading', () => {
  it('loads the tiny models without llama.cpp warnings and reports their info', () => {
    expect(engine.warnings).toEqual([])
    expect(engine.threads).toBe(1)
    expect(chat.info).toMatchObject({
      architecture: 'llama',
      parameterCount: tinyChatModel().parameterCount,
      contextLength: 2048,
      embeddingLength: 64,
      blockCount: 2,
      quantizationLevel: 'F32',
      fileType: 0,
      capabilities: ['completion', 'tools', 'insert'],
    })
    expect(chat.info.metadata['general.architecture']).toBe('llama')
    expect(chat.info.metadata['llama.context_length']).toBe(2048)
    expect(chat.info.metadata['general.parameter_count']).toBe(tinyChatModel().parameterCount)
    expect(chat.info.template).toContain('<|im_start|>')
    expect(chat.contextLength).toBe(2048)
    expect(chat.sizeBytes).toBeGreaterThan(500_000)
    expect(chat.loadDurationNs).toBeGreaterThan(0)
    expect(embed.kind).toBe('embedding')
    expect(embed.info.capabilities).toEqual(['embedding'])
  })

  it('detects capabilities from the model file (no tools/insert in a plain template, thinking when present)', async () => {
    const plain = await engine.inspect(paths.plain)
    expect(plain.capabilities).toEqual(['completion'])
    const thinker = await engine.inspect(paths.thinker)
    expect(thinker.capabilities).toContain('thinking')
  })
})

describe('generation', () => {
  it('is deterministic at temperature 0 and prints printable text', async () => {
    const a = await chat.complete({ prompt: 'Why is the sky blue?', options: { temperature: 0, num_predict: 24 } })
    const b = await chat.complete({ prompt: 'Why is the sky blue?', options: { temperature: 0, num_predict: 24 } })
    expect(a.content).toBe(b.content)
    expect(a.content.length).toBeGreaterThan(0)
    expect(a.content).toMatch(PRINTABLE)
    expect(a.promptEvalCount).toBeGreaterThan(5)
    expect(a.evalDurationNs).toBeGreaterThan(0)
  })

  it('same seed and options give the same output; different seeds differ', async () => {
    const run = (seed: number) => chat.chat({ messages: [{ role: 'user', content: 'Tell me a story' }], options: { seed, num_predict: 32 } })
    const first = await run(42)
    expect((await run(42)).content).toBe(first.content)
    const others = new Set<string>()
    for (const seed of [1, 7, 9]) others.add((await run(seed)).content)
    others.add(first.content)
    expect(others.size).toBeGreaterThan(1)
  })

  it('same seed gives the same output in a fresh process (restart)', async () => {
    const options = { seed: 1234, num_predict: 24, temperature: 0.9 }
    const local = await chat.chat({ messages: [{ role: 'user', content: 'restart me' }], options })
    const probe = fileURLToPath(new URL('../../../tests/support/engineRestartProbe.ts', import.meta.url))
    const tsx = fileURLToPath(new URL('../../../node_modules/.bin/tsx', import.meta.url))
    const { stdout } = await promisify(execFile)(tsx, [probe, paths.chat, 'restart me', JSON.stringify(options)], { timeout: 60_000 })
    const remote = JSON.parse(stdout.trim().split('\n').pop()!) as { content: string; evalCount: number }
    expect(remote).toEqual({ content: local.content, evalCount: local.evalCount })
  })

  it('num_predict bounds the output (done_reason length)', async () => {
    const r = await chat.complete({ prompt: 'count', options: { temperature: 0, num_predict: 5 } })
    expect(r.doneReason).toBe('length')
    expect(r.evalCount).toBe(5)
  })

  it('honours stop sequences, never streaming them', async () => {
    const base = await chat.complete({ prompt: 'go', options: { temperature: 0, num_predict: 40 } })
    expect(base.content.length).toBeGreaterThan(12)
    const stop = base.content.slice(6, 9)
    const expected = base.content.slice(0, base.content.indexOf(stop))
    const chunks: string[] = []
    const r = await chat.complete({
      prompt: 'go',
      options: { temperature: 0, num_predict: 40, stop: ['NEVER-THERE', stop] },
      onToken: (c) => chunks.push(c.content ?? ''),
    })
    expect(r.content).toBe(expected)
    expect(r.doneReason).toBe('stop')
    expect(chunks.join('')).toBe(expected)
    // a single string works too
    const single = await chat.complete({ prompt: 'go', options: { temperature: 0, num_predict: 40, stop } })
    expect(single.content).toBe(expected)
  })

  it('streams tokens whose concatenation is the final content', async () => {
    const chunks: TokenChunk[] = []
    const r = await chat.chat({ messages: [{ role: 'user', content: 'hi' }], options: { seed: 3, num_predict: 30 }, onToken: (c) => chunks.push(c) })
    expect(chunks.map((c) => c.content ?? '').join('')).toBe(r.content)
  })

  it('onStart comes once, before the first token, and never for an input refused before evaluation', async () => {
    const events: string[] = []
    // Told while the prompt is evaluated, not in the same breath as the first token: a microtask queued by
    // onStart has run by the time the first token comes.
    let startSettled = false
    let settledAtFirstToken: boolean | undefined
    await chat.chat({
      messages: [{ role: 'user', content: 'hi' }],
      options: { seed: 3, num_predict: 5 },
      onToken: () => {
        settledAtFirstToken ??= startSettled
        events.push('token')
      },
      onStart: () => {
        events.push('start')
        queueMicrotask(() => (startSettled = true))
      },
    })
    expect(settledAtFirstToken).toBe(true)
    expect(events[0]).toBe('start')
    expect(events.filter((e) => e === 'start')).toHaveLength(1)
    expect(events.filter((e) => e === 'token').length).toBeGreaterThan(0)
    let started = false
    const long = 'word '.repeat(4000)
    const refused = chat.complete({ prompt: long, raw: true, truncate: false, onStart: () => (started = true) })
    await expect(refused).rejects.toBeInstanceOf(EngineInputTooLongError)
    await new Promise((resolve) => setImmediate(resolve))
    expect(started).toBe(false)
  })

  it('an abort stops generation early', async () => {
    const controller = new AbortController()
    let seen = 0
    const r = await chat.complete({
      prompt: 'a long one',
      raw: true,
      options: { temperature: 0, num_predict: 1000 },
      signal: controller.signal,
      onToken: () => {
        if (++seen === 3) controller.abort()
      },
    })
    expect(r.aborted).toBe(true)
    expect(r.evalCount).toBeLessThan(10)
  })

  it('a request aborted while queued never runs', async () => {
    const controller = new AbortController()
    const first = chat.complete({ prompt: 'x', options: { temperature: 0, num_predict: 20 } })
    const second = chat.complete({ prompt: 'y', options: { temperature: 0, num_predict: 20 }, signal: controller.signal })
    expect(chat.pending).toBe(2)
    controller.abort()
    await expect(second).rejects.toThrow()
    await expect(first).resolves.toMatchObject({ doneReason: 'length' })
    expect(chat.pending).toBe(0)
  })

  it('raw prompts skip the template', async () => {
    const templated = await chat.complete({ prompt: 'abc', options: { temperature: 0, num_predict: 1 } })
    const raw = await chat.complete({ prompt: 'abc', raw: true, options: { temperature: 0, num_predict: 1 } })
    expect(raw.promptEvalCount).toBe(4) // <s> a b c
    expect(templated.promptEvalCount).toBeGreaterThan(raw.promptEvalCount)
  })

  it('returns logprobs per generated token', async () => {
    const r = await chat.complete({ prompt: 'abc', raw: true, logprobs: true, topLogprobs: 3, options: { seed: 1, num_predict: 6 } })
    expect(r.logprobs).toHaveLength(r.evalCount)
    for (const lp of r.logprobs!) {
      expect(lp.logprob).toBeLessThanOrEqual(0)
      expect(lp.top_logprobs!.length).toBeGreaterThan(0)
      expect(lp.top_logprobs!.length).toBeLessThanOrEqual(3)
    }
    expect(r.logprobs!.map((l) => l.token).join('')).toBe(r.content)
  })

  it('recreates the context for a different num_ctx', async () => {
    const plain = await engine.loadModel({ path: paths.plain, numCtx: 512 })
    expect(plain.contextLength).toBe(512)
    await plain.complete({ prompt: 'x', options: { num_ctx: 256, num_predict: 2 } })
    expect(plain.contextLength).toBe(256)
    await plain.unload()
  })
})

describe('repetition penalties', () => {
  // Greedy decoding of the random tiny model repeats itself; each penalty changes what it writes, on both paths.
  const distinct = (text: string) => new Set(text).size
  it('repeat_penalty, frequency_penalty and presence_penalty take effect (completion path)', async () => {
    const base = { prompt: 'Once upon a time', options: { temperature: 0, num_predict: 48 } }
    const plain = await chat.complete(base)
    for (const extra of [{ repeat_penalty: 1.8 }, { frequency_penalty: 1.5 }, { presence_penalty: 1.5 }]) {
      const penalised = await chat.complete({ ...base, options: { ...base.options, ...extra } })
      expect(penalised.content, JSON.stringify(extra)).not.toBe(plain.content)
    }
    // repeat_last_n 0 turns the penalty off: the output is the unpenalised one.
    const off = await chat.complete({ ...base, options: { ...base.options, repeat_penalty: 1.8, repeat_last_n: 0 } })
    expect(off.content).toBe(plain.content)
    const strong = await chat.complete({ ...base, options: { ...base.options, repeat_penalty: 3, repeat_last_n: -1 } })
    expect(distinct(strong.content)).toBeGreaterThanOrEqual(distinct(plain.content))
  })

  it('take effect on the tool-calling path too (LlamaChat), and are off by default there as well', async () => {
    const messages = [{ role: 'user' as const, content: 'Say something' }]
    // After a tool result the nudge is off, so the model writes text to compare.
    const lastIsTool = { messages: [...messages, { role: 'assistant' as const, content: '', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'x' } } }] }, { role: 'tool' as const, content: 'sunny', tool_name: 'get_weather' }], tools: [weatherTool], options: { temperature: 0, num_predict: 32 } }
    const plain = await chat.chat(lastIsTool)
    const penalised = await chat.chat({ ...lastIsTool, options: { ...lastIsTool.options, repeat_penalty: 2.5 } })
    expect(penalised.content).not.toBe(plain.content)
    const explicitOff = await chat.chat({ ...lastIsTool, options: { ...lastIsTool.options, repeat_penalty: 1 } })
    expect(explicitOff.content).toBe(plain.content)
  })
})

describe('structured output', () => {
  const schema = {
    type: 'object',
    properties: {
      mood: { type: 'string', enum: ['happy', 'sad', 'angry'] },
      ok: { type: 'boolean' },
      tag: { type: 'string' },
    },
    required: ['mood', 'ok', 'tag'],
  }
  const validate = new Ajv().compile(schema)

  it('a JSON schema with enum and boolean fields always yields valid JSON', async () => {
    for (let seed = 0; seed < 12; seed++) {
      const r = await chat.chat({ messages: [{ role: 'user', content: `mood ${seed}?` }], format: schema, options: { seed, temperature: 1 } })
      const parsed = JSON.parse(r.content)
      expect(validate(parsed), `${seed}: ${r.content}`).toBe(true)
      expect(r.doneReason).toBe('stop')
    }
  })

  it("format 'json' yields a JSON object (bounded grammar for the nudged tiny model)", async () => {
    for (let seed = 0; seed < 6; seed++) {
      const r = await chat.complete({ prompt: 'json please', format: 'json', options: { seed } })
      expect(r.doneReason).toBe('stop')
      const parsed = JSON.parse(r.content)
      expect(typeof parsed).toBe('object')
      expect(Array.isArray(parsed)).toBe(false)
    }
  })

  it('multi-byte UTF-8 output (byte-fallback tokens) decodes and streams intact', async () => {
    const utf8 = { type: 'object', properties: { w: { enum: ['日本語', 'héllo', 'ünïcødé'] } }, required: ['w'] }
    for (let seed = 0; seed < 4; seed++) {
      const chunks: string[] = []
      const r = await chat.chat({ messages: [{ role: 'user', content: 'word' }], format: utf8, options: { seed }, onToken: (c) => chunks.push(c.content ?? '') })
      expect(['日本語', 'héllo', 'ünïcødé']).toContain(JSON.parse(r.content).w)
      expect(chunks.join('')).toBe(r.content)
      expect(chunks.join('')).not.toContain('\uFFFD')
    }
  })

  it('an invalid format is a typed 400-class error', async () => {
    await expect(chat.complete({ prompt: 'x', format: 'yaml' as never })).rejects.toMatchObject({ code: 'invalid_format' })
  })

  it('a format schema past its bounds is refused at once, before a grammar is built (100,000 enum values held the server 29 s)', async () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`)
    const t0 = performance.now()
    await expect(chat.complete({ prompt: 'x', format: { type: 'string', enum: values(100_000) } })).rejects.toMatchObject({ code: 'invalid_format', message: expect.stringContaining('at most 65536') })
    await expect(chat.complete({ prompt: 'x', format: { type: 'object', properties: { a: { enum: values(600) }, b: { enum: values(600) } } } })).rejects.toMatchObject({ code: 'invalid_format', message: 'format schema has 1200 enum values; at most 1000 in all' })
    expect(performance.now() - t0).toBeLessThan(5_000) // against 29 s building the grammar; room for a stalled loop beside the suite
    // within them, served
    const r = await chat.complete({ prompt: 'x', format: { type: 'string', enum: values(50) }, options: { seed: 1, num_predict: 8 } })
    expect(values(50)).toContain(JSON.parse(r.content))
  })
})

describe('tools', () => {
  it("tools whose definitions do not fit the context are the client's input_too_long (a 400), not a failure of the server", async () => {
    const long = { ...weatherTool, function: { ...weatherTool.function, description: 'd '.repeat(20_000) } }
    await expect(chat.chat({ messages: [{ role: 'user', content: 'hi' }], tools: [long], options: { seed: 1, num_predict: 4 } })).rejects.toMatchObject({ code: 'input_too_long' })
    // the model is still usable after it
    expect((await chat.chat({ messages: [{ role: 'user', content: 'hi' }], tools: [weatherTool], options: { seed: 1, num_predict: 4 } })).evalCount).toBeGreaterThan(0)
  })

  it('returns tool calls when tools are offered (the tiny model is nudged), then answers a tool result', async () => {
    const messages = [{ role: 'user' as const, content: 'What is the weather in Paris?' }]
    const r = await chat.chat({ messages, tools: [weatherTool], options: { seed: 5 } })
    expect(r.toolCalls).toHaveLength(1)
    const call = r.toolCalls![0]!
    expect(call.function.name).toBe('get_weather')
    expect(typeof call.function.arguments.city).toBe('string')
    expect(r.doneReason).toBe('stop')

    const follow = await chat.chat({
      messages: [...messages, { role: 'assistant', content: '', tool_calls: r.toolCalls }, { role: 'tool', tool_name: 'get_weather', content: '21 C, sunny' }],
      tools: [weatherTool],
      options: { seed: 5, num_predict: 16 },
    })
    expect(follow.toolCalls).toBeUndefined()
    expect(follow.promptEvalCount).toBeGreaterThan(r.promptEvalCount)
  })

  it('a model whose template has no tools refuses them', async () => {
    const plain = await engine.loadModel({ path: paths.plain, name: 'plain:latest' })
    try {
      const err = await plain.chat({ messages: [{ role: 'user', content: 'x' }], tools: [weatherTool] }).catch((e) => e)
      expect(err).toBeInstanceOf(EngineCapabilityError)
      expect(err.code).toBe('tools_unsupported')
      expect(err.shortMessage).toBe('"plain:latest" does not support tools')
    } finally {
      await plain.unload()
    }
  })
})

describe('fill-in-the-middle and capability errors', () => {
  it('uses FIM tokens when the model has them', async () => {
    const r = await chat.complete({ prompt: 'def add(a, b):', suffix: '    return c', options: { seed: 1, num_predict: 8 } })
    expect(r.promptEvalCount).toBeGreaterThan(20)
    expect(r.content).toMatch(PRINTABLE)
  })

  it('a model without FIM tokens rejects a suffix the way Ollama does', async () => {
    const plain = await engine.loadModel({ path: paths.plain, name: 'plain:latest' })
    try {
      const err = await plain.complete({ prompt: 'a', suffix: 'b' }).catch((e) => e)
      expect(err).toBeInstanceOf(EngineCapabilityError)
      expect(err.code).toBe('insert_unsupported')
      expect(err.shortMessage).toBe('"plain:latest" does not support insert')
      expect(engineErrorMessage(err, 'other')).toBe('"other" does not support insert')
      // an empty suffix is not fill-in-the-middle
      await expect(plain.complete({ prompt: 'a', suffix: '', options: { num_predict: 1 } })).resolves.toBeTruthy()
    } finally {
      await plain.unload()
    }
  })

  it('think on a model without thinking, images, and the wrong model kind are typed errors', async () => {
    await expect(chat.chat({ messages: [{ role: 'user', content: 'x' }], think: true })).rejects.toMatchObject({ code: 'thinking_unsupported' })
    await expect(chat.chat({ messages: [{ role: 'user', content: 'x' }], think: false, options: { num_predict: 1 } })).resolves.toBeTruthy()
    await expect(chat.chat({ messages: [{ role: 'user', content: 'x', images: ['AAAA'] }] })).rejects.toMatchObject({ code: 'vision_unsupported' })
    // a chat model embeds (as in Ollama); an embedding model does not generate
    expect((await chat.embed({ inputs: ['x'] })).embeddings[0]).toHaveLength(64)
    const err = await embed.complete({ prompt: 'x' }).catch((e) => e)
    expect(err).toBeInstanceOf(EngineError)
    expect(err.shortMessage).toBe('"svc-tiny-embed:latest" does not support generate')
  })
})

describe('thinking', () => {
  it('a model whose template has a thinking section accepts think (true/false) and answers', async () => {
    const thinker = await engine.loadModel({ path: paths.thinker, name: 'thinker:latest' })
    try {
      expect(thinker.info.capabilities).toContain('thinking')
      for (const think of [true, false]) {
        const r = await thinker.chat({ messages: [{ role: 'user', content: 'hmm' }], think, options: { seed: 3, num_predict: 12 } })
        expect(r.evalCount).toBeGreaterThan(0)
        expect(r.content.length + (r.thinking?.length ?? 0)).toBeGreaterThan(0)
        if (!think) expect(r.thinking).toBeUndefined()
      }
    } finally {
      await thinker.unload()
    }
  })

  it('think levels reach a template that reads reasoning_effort; elsewhere a level is think: true', async () => {
    const leveled = await engine.loadModel({ path: paths.leveled, name: 'leveled:latest' })
    const thinker = await engine.loadModel({ path: paths.thinker, name: 'thinker:latest' })
    try {
      const prompt = async (m: EngineModel, think: boolean | 'low' | 'medium' | 'high') =>
        (await m.chat({ messages: [{ role: 'user', content: 'hmm' }], think, options: { seed: 3, num_predict: 1 } })).promptEvalCount
      const [none, low, medium, high] = [await prompt(leveled, true), await prompt(leveled, 'low'), await prompt(leveled, 'medium'), await prompt(leveled, 'high')]
      // The level is rendered into the prompt (`Reasoning: <level>` in a system turn): longer prompts, and each level its own.
      expect(low).toBeGreaterThan(none)
      expect(new Set([low, medium, high]).size).toBe(3)
      // A thinking template without levels: the level is plain thinking (the prompt is the one of think: true).
      expect(await prompt(thinker, 'high')).toBe(await prompt(thinker, true))
    } finally {
      await leveled.unload()
      await thinker.unload()
    }
  })
})

describe('embeddings', () => {
  const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))

  it('returns one L2-normalised vector of n_embd per input', async () => {
    const r = await embed.embed({ inputs: ['hello world', 'something else entirely'] })
    expect(r.embeddings).toHaveLength(2)
    for (const v of r.embeddings) {
      expect(v).toHaveLength(64)
      expect(norm(v)).toBeCloseTo(1, 5)
    }
    expect(r.embeddings[0]).not.toEqual(r.embeddings[1])
    expect(r.promptEvalCount).toBeGreaterThan(10)
    const again = await embed.embed({ inputs: ['hello world'] })
    expect(again.embeddings[0]).toEqual(r.embeddings[0])
  })

  it('dimensions truncates then renormalises', async () => {
    const full = (await embed.embed({ inputs: ['abc'] })).embeddings[0]!
    const short = (await embed.embed({ inputs: ['abc'], dimensions: 16 })).embeddings[0]!
    expect(short).toHaveLength(16)
    expect(norm(short)).toBeCloseTo(1, 5)
    const scale = short[0]! / full[0]!
    short.forEach((x, i) => expect(x).toBeCloseTo(full[i]! * scale, 5))
    await expect(embed.embed({ inputs: ['abc'], dimensions: 65 })).rejects.toMatchObject({ code: 'invalid_options' })
  })

  it('an input longer than the context: truncated by default, an error with truncate false', async () => {
    const small = await engine.loadModel({ path: paths.embed, numCtx: 64 })
    try {
      const long = 'word '.repeat(100)
      const r = await small.embed({ inputs: [long] })
      expect(r.embeddings[0]).toHaveLength(64)
      expect(r.promptEvalCount).toBeLessThanOrEqual(64)
      const err = await small.embed({ inputs: [long], truncate: false }).catch((e) => e)
      expect(err).toBeInstanceOf(EngineInputTooLongError)
      expect(err.code).toBe('input_too_long')
    } finally {
      await small.unload()
    }
  })

  it('an input far longer than the default context (300 kB) is truncated to what the context holds, or refused with truncate false', async () => {
    const huge = 'B'.repeat(300_000)
    const r = await embed.embed({ inputs: [huge] })
    expect(r.embeddings[0]).toHaveLength(64)
    expect(r.promptEvalCount).toBeLessThan(embed.contextLength)
    await expect(embed.embed({ inputs: [huge], truncate: false })).rejects.toBeInstanceOf(EngineInputTooLongError)
  })
})

describe('after everything', () => {
  it('no llama.cpp warnings were logged by any load, variant or generation', () => {
    expect(engine.warnings).toEqual([])
  })
})
