/**
 * Benchmark: the inference engine in-process (no HTTP) on the tiny default models.
 *
 *   npx tsx scripts/bench/modelserverEngine.ts [--tokens 400] [--runs 5] [--threads 1]
 *
 * Reports model sizes, load time (first load resolves the chat wrapper, a reload reuses it), generation
 * tokens/s (eval_count / eval_duration, and wall-clock), prompt-eval tokens/s and embeddings per second,
 * each the median of the runs. The HTTP side is in modelserverThroughput.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { createEngine } from '../../src/modelserver/engine/createEngine.js'
import { tinyChatModel, tinyEmbedModel } from '../../src/modelserver/gguf/tinyModels.js'

const { values } = parseArgs({
  options: { tokens: { type: 'string', default: '400' }, runs: { type: 'string', default: '5' }, threads: { type: 'string', default: '1' } },
})
const tokens = Number(values.tokens)
const runs = Number(values.runs)
const threads = Number(values.threads)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const ms = (ns: number) => (ns / 1e6).toFixed(0)

const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-engine-'))
const chatPath = path.join(dir, 'chat.gguf')
const embedPath = path.join(dir, 'embed.gguf')
const buildStart = performance.now()
const chatModel = tinyChatModel()
const embedModel = tinyEmbedModel()
const buildMs = performance.now() - buildStart
await writeFile(chatPath, chatModel.bytes)
await writeFile(embedPath, embedModel.bytes)

const engineStart = performance.now()
const engine = await createEngine({ threads })
const engineMs = performance.now() - engineStart
try {
  const first = await engine.loadModel({ path: chatPath, name: chatModel.name })
  const firstLoad = first.loadDurationNs
  await first.unload()
  const chat = await engine.loadModel({ path: chatPath, name: chatModel.name })
  const embed = await engine.loadModel({ path: embedPath, name: embedModel.name })

  const evalRates: number[] = []
  const wallRates: number[] = []
  const promptRates: number[] = []
  let produced = 0
  const longPrompt = 'The quick brown fox jumps over the lazy dog. '.repeat(20)
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    const r = await chat.complete({ prompt: 'Once upon a time', raw: true, options: { seed: 7 + i, temperature: 0.8, num_predict: tokens } })
    wallRates.push(r.evalCount / ((performance.now() - t) / 1000))
    evalRates.push(r.evalCount / (r.evalDurationNs / 1e9))
    produced = r.evalCount
    const p = await chat.complete({ prompt: longPrompt, raw: true, options: { seed: 1, num_predict: 1 } })
    promptRates.push(p.promptEvalCount / (p.promptEvalDurationNs / 1e9))
  }
  const inputs = Array.from({ length: 32 }, (_, i) => `sentence number ${i} about something`)
  const embedRates: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await embed.embed({ inputs })
    embedRates.push(inputs.length / ((performance.now() - t) / 1000))
  }

  console.log(`llama threads: ${threads}, runs: ${runs}, tokens per run: ${produced} (num_predict ${tokens})`)
  console.log(`models: ${chatModel.name} ${chatModel.bytes.length} B (${chatModel.parameterSize} params), ${embedModel.name} ${embedModel.bytes.length} B (${embedModel.parameterSize})`)
  console.log(`build both GGUFs: ${buildMs.toFixed(0)} ms; getLlama: ${engineMs.toFixed(0)} ms`)
  console.log(`load chat: first ${ms(firstLoad)} ms (resolves the chat wrapper), reload ${ms(chat.loadDurationNs)} ms; embed ${ms(embed.loadDurationNs)} ms`)
  console.log(`resident size: chat ${(chat.sizeBytes / 1e6).toFixed(1)} MB, embed ${(embed.sizeBytes / 1e6).toFixed(1)} MB (weights + context estimate)`)
  console.log(`generation: ${median(evalRates).toFixed(0)} tokens/s (eval_duration), ${median(wallRates).toFixed(0)} tokens/s (wall clock)`)
  console.log(`prompt eval: ${median(promptRates).toFixed(0)} tokens/s`)
  console.log(`embeddings: ${median(embedRates).toFixed(0)} inputs/s`)
} finally {
  await engine.dispose()
  await rm(dir, { recursive: true, force: true })
}
