import { describe, expect, it } from 'vitest'
import type { Engine, EngineModel, GenerationResult, ModelInfo, TokenChunk } from '../engine/Engine.js'
import { EngineCapabilityError, EngineError } from '../engine/errors.js'
import { ModelServerMetrics } from '../metrics/ModelServerMetrics.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { ResidencyManager } from '../residency/ResidencyManager.js'
import { parseModelName } from '../store/ModelName.js'
import type { ModelRecord } from '../store/ModelStore.js'
import { runGeneration } from './runGeneration.js'

const result: GenerationResult = {
  content: 'ab',
  doneReason: 'stop',
  promptEvalCount: 3,
  evalCount: 2,
  promptEvalDurationNs: 10,
  evalDurationNs: 20,
  totalDurationNs: 40,
}

const fakeModel = { path: __filename, name: 'm', kind: 'completion', info: {} as ModelInfo, contextLength: 2048, sizeBytes: 1, loadDurationNs: 5, pending: 0, unload: async () => {} } as unknown as EngineModel
const engine = { threads: 1, warnings: [], loadModel: async () => fakeModel, inspect: async () => ({}) as ModelInfo, dispose: async () => {} } as unknown as Engine

function context(): ModelServerContext {
  return {
    residency: new ResidencyManager({ engine, maxLoadedBytes: 1e9, maxQueue: 4, defaultNumCtx: 2048 }),
    metrics: new ModelServerMetrics(),
  } as unknown as ModelServerContext
}
const record = { name: parseModelName('m'), modelPath: __filename, modelDigest: 'd', parameters: undefined } as unknown as ModelRecord

const params = (run: (onToken: ((c: TokenChunk) => void) | undefined) => Promise<GenerationResult>, stream = true) => ({
  ctx: context(),
  record,
  name: 'm',
  keepAliveMs: 60_000,
  stream,
  signal: new AbortController().signal,
  run: (_m: EngineModel, onToken: ((c: TokenChunk) => void) | undefined) => run(onToken),
  chunk: (piece: TokenChunk) => ({ response: piece.content ?? '', done: false }),
  final: (r: GenerationResult) => ({ done: true, done_reason: r.doneReason }),
})

async function lines(stream: AsyncIterable<string | Uint8Array>) {
  let text = ''
  for await (const part of stream) text += String(part)
  return text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
}

describe('runGeneration', () => {
  it('streams one chunk per token, then the final object', async () => {
    const res = await runGeneration(
      params(async (onToken) => {
        onToken?.({ content: 'a' })
        onToken?.({ content: 'b' })
        return result
      }),
    )
    expect(res.status).toBe(200)
    expect(await lines(res.stream!)).toEqual([{ response: 'a', done: false }, { response: 'b', done: false }, { done: true, done_reason: 'stop' }])
  })

  it('an error before the first token is a status, with the client model name in capability messages', async () => {
    const p = params(async () => {
      throw new EngineCapabilityError('insert', 'whatever')
    })
    await expect(runGeneration(p)).rejects.toMatchObject({ status: 400, shortMessage: '"m" does not support insert' })
    expect(p.ctx.residency.queueDepth(record)).toBe(0)
  })

  it('an error after streaming started ends the stream with an {error} line', async () => {
    const res = await runGeneration(
      params(async (onToken) => {
        onToken?.({ content: 'a' })
        await new Promise((r) => setTimeout(r, 5))
        throw new EngineError('generation_failed', 'generation failed: out of memory')
      }),
    )
    expect(res.status).toBe(200)
    expect(await lines(res.stream!)).toEqual([{ response: 'a', done: false }, { error: 'generation failed: out of memory' }])
  })

  describe('headersAtStart (the hosted APIs’ surfaces: Messages, Responses)', () => {
    const startedThenFailed = (headersAtStart: boolean | undefined) => ({
      ...params(async () => {
        throw new Error('unreachable')
      }),
      headersAtStart,
      run: async (_m: EngineModel, _onToken: unknown, onStart?: () => void) => {
        onStart?.()
        await new Promise((r) => setTimeout(r, 5))
        throw new EngineError('generation_failed', 'generation failed: out of memory')
      },
    })

    it('answers 200 with its headers to be sent at once when evaluation starts; a failure after that is in the stream', async () => {
      const res = await runGeneration(startedThenFailed(true))
      expect(res).toMatchObject({ status: 200, flushHeaders: true })
      expect(await lines(res.stream!)).toEqual([{ error: 'generation failed: out of memory' }])
    })

    it('without it (Ollama’s own surfaces) the engine is not asked to tell the start: the same failure is a status', async () => {
      const p = startedThenFailed(undefined)
      await expect(runGeneration(p)).rejects.toMatchObject({ status: 500 })
      expect(p.ctx.residency.queueDepth(record)).toBe(0)
    })

    it('an input refused before evaluation starts is still a status', async () => {
      const p = {
        ...params(async () => result),
        headersAtStart: true,
        run: async () => {
          throw new EngineCapabilityError('insert', 'whatever')
        },
      }
      await expect(runGeneration(p)).rejects.toMatchObject({ status: 400 })
    })
  })

  it('non-streamed: the final object, and engine errors keep their Ollama status', async () => {
    expect((await runGeneration(params(async () => result, false))).body).toEqual({ done: true, done_reason: 'stop' })
    await expect(
      runGeneration(
        params(async () => {
          throw new EngineError('generation_failed', 'boom')
        }, false),
      ),
    ).rejects.toMatchObject({ status: 500 })
  })
})
