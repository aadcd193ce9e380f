import { buildChatTemplate } from './chatTemplate.js'
import { writeGguf, type GgufTensor, type GgufValue } from './GgufWriter.js'
import { Prng } from './prng.js'
import { buildTinyVocab, SPM_SPACE, TOOL_CALL_OPENER, type TinyVocab } from './tinyVocab.js'

/**
 * Builds a tiny llama-architecture GGUF (f32, seeded weights). Its text is not meaningful: the weights
 * are random. Two things make it usable as a test model:
 *  - a "bias channel": dimension 0 of every token embedding carries a large constant that survives the
 *    residual stream and the final RMSNorm, and column 0 of the output matrix turns it into a per-token
 *    logit bias — printable characters favoured, raw bytes and control tokens suppressed;
 *  - (chat model) the metadata keys `svc.nudge.tool_call_token` / `svc.nudge.tool_call_logit_bias`, which our
 *    engine reads and applies as a logit bias to that token (the whole call opener `<tool_call>\\n{"name": "`)
 *    when tools are offered, because random weights would never start a call on their own; and
 *    `svc.nudge.json_string_max_length`, a bound the engine puts on free strings in JSON grammars (format
 *    schemas, tool arguments), because random weights would never close a string.
 */
export type TinyLlamaOptions = {
  name: string
  seed: number
  nEmbd?: number
  nLayer?: number
  nHead?: number
  nFf?: number
  contextLength?: number
  /** ChatML chat template (and its turn tokens). */
  chat: boolean
  tools: boolean
  thinking: boolean
  /** With `thinking`: the template reads `reasoning_effort` (think levels low/medium/high), as gpt-oss's does. */
  thinkLevels?: boolean
  fim: boolean
  /** Set `llama.pooling_type` (1 = mean): the model is an embedding model. */
  pooling?: number
  /** Logit bias for the tool-call opener that the engine applies when tools are offered. */
  toolCallNudge?: number
  /** Bound the engine puts on free JSON strings under a grammar (random weights never close a string). */
  maxJsonStringLength?: number
  description?: string
  /** More metadata entries, written last (tests: keys a file may carry, such as `constructor`). */
  extraMetadata?: ReadonlyArray<readonly [string, GgufValue]>
}

export type TinyModel = {
  bytes: Uint8Array
  parameterCount: number
  vocab: TinyVocab
}

const BIAS_CHANNEL = 4 // value of embedding dimension 0 for every token

export function buildTinyLlama(options: TinyLlamaOptions): TinyModel {
  const nEmbd = options.nEmbd ?? 64
  const nLayer = options.nLayer ?? 2
  const nHead = options.nHead ?? 4
  const nFf = options.nFf ?? 128
  const contextLength = options.contextLength ?? 2048
  const headDim = nEmbd / nHead
  const vocab = buildTinyVocab({ chatml: options.chat, tools: options.tools, thinking: options.thinking, fim: options.fim })
  const nVocab = vocab.tokens.length
  const rng = new Prng(options.seed)

  const matrix = (rows: number, cols: number, std: number): Float32Array => {
    const m = new Float32Array(rows * cols)
    for (let i = 0; i < m.length; i++) m[i] = rng.normal(std)
    return m
  }
  const ones = (n: number): Float32Array => new Float32Array(n).fill(1)

  // Token embeddings: row t = [BIAS_CHANNEL, noise...]
  const tokenEmbd = matrix(nVocab, nEmbd, 1)
  const generative = options.pooling === undefined
  if (generative) for (let t = 0; t < nVocab; t++) tokenEmbd[t * nEmbd] = BIAS_CHANNEL

  // Output (generative models only): column 0 carries the per-token bias, the rest is noise.
  let output: Float32Array | undefined
  if (generative) {
    output = matrix(nVocab, nEmbd, 0.28)
    const bias = tokenBiases(vocab)
    for (let t = 0; t < nVocab; t++) output[t * nEmbd] = bias[t]!
  }

  const tensors: GgufTensor[] = [{ name: 'token_embd.weight', dims: [nEmbd, nVocab], data: tokenEmbd }]
  for (let l = 0; l < nLayer; l++) {
    const blk = `blk.${l}`
    const attnStd = 0.08
    const ffnStd = 0.08
    tensors.push(
      { name: `${blk}.attn_norm.weight`, dims: [nEmbd], data: ones(nEmbd) },
      { name: `${blk}.attn_q.weight`, dims: [nEmbd, nEmbd], data: matrix(nEmbd, nEmbd, attnStd) },
      { name: `${blk}.attn_k.weight`, dims: [nEmbd, nEmbd], data: matrix(nEmbd, nEmbd, attnStd) },
      { name: `${blk}.attn_v.weight`, dims: [nEmbd, nEmbd], data: matrix(nEmbd, nEmbd, attnStd) },
      { name: `${blk}.attn_output.weight`, dims: [nEmbd, nEmbd], data: matrix(nEmbd, nEmbd, attnStd) },
      { name: `${blk}.ffn_norm.weight`, dims: [nEmbd], data: ones(nEmbd) },
      { name: `${blk}.ffn_gate.weight`, dims: [nEmbd, nFf], data: matrix(nFf, nEmbd, ffnStd) },
      { name: `${blk}.ffn_down.weight`, dims: [nFf, nEmbd], data: matrix(nEmbd, nFf, ffnStd) },
      { name: `${blk}.ffn_up.weight`, dims: [nEmbd, nFf], data: matrix(nFf, nEmbd, ffnStd) },
    )
  }
  tensors.push({ name: 'output_norm.weight', dims: [nEmbd], data: ones(nEmbd) })
  if (output) tensors.push({ name: 'output.weight', dims: [nEmbd, nVocab], data: output })

  const parameterCount = tensors.reduce((n, t) => n + t.data.length, 0)

  const md = tinyLlamaMetadata(options, { nVocab, contextLength, nEmbd, nLayer, nFf, nHead, headDim }, vocab, parameterCount)
  md.push(...(options.extraMetadata ?? []))

  return { bytes: writeGguf({ metadata: md, tensors }), parameterCount, vocab }
}

type TinyDims = { nVocab: number; contextLength: number; nEmbd: number; nLayer: number; nFf: number; nHead: number; headDim: number }

/** The GGUF metadata of a tiny model: llama's hyper-parameters, its tokenizer, the chat template and the nudges. */
function tinyLlamaMetadata(options: TinyLlamaOptions, { nVocab, contextLength, nEmbd, nLayer, nFf, nHead, headDim }: TinyDims, vocab: TinyVocab, parameterCount: number): Array<readonly [string, GgufValue]> {
  const md: Array<readonly [string, GgufValue]> = [
    ['general.architecture', { kind: 'string', value: 'llama' }],
    ['general.type', { kind: 'string', value: 'model' }],
    ['general.name', { kind: 'string', value: options.name }],
    ['general.description', { kind: 'string', value: options.description ?? 'Tiny random-weight model; its text is not meaningful.' }],
    ['general.license', { kind: 'string', value: 'MIT' }],
    ['general.file_type', { kind: 'u32', value: 0 }], // ALL_F32
    ['general.parameter_count', { kind: 'u64', value: parameterCount }],
    ['general.quantization_version', { kind: 'u32', value: 2 }],
    ['llama.vocab_size', { kind: 'u32', value: nVocab }],
    ['llama.context_length', { kind: 'u32', value: contextLength }],
    ['llama.embedding_length', { kind: 'u32', value: nEmbd }],
    ['llama.block_count', { kind: 'u32', value: nLayer }],
    ['llama.feed_forward_length', { kind: 'u32', value: nFf }],
    ['llama.attention.head_count', { kind: 'u32', value: nHead }],
    ['llama.attention.head_count_kv', { kind: 'u32', value: nHead }],
    ['llama.attention.layer_norm_rms_epsilon', { kind: 'f32', value: 1e-5 }],
    ['llama.rope.dimension_count', { kind: 'u32', value: headDim }],
    ['llama.rope.freq_base', { kind: 'f32', value: 10000 }],
  ]
  if (options.pooling !== undefined) {
    md.push(['llama.pooling_type', { kind: 'u32', value: options.pooling }])
  }
  md.push(
    ['tokenizer.ggml.model', { kind: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { kind: 'array', of: 'string', value: vocab.tokens }],
    ['tokenizer.ggml.scores', { kind: 'array', of: 'f32', value: vocab.scores }],
    ['tokenizer.ggml.token_type', { kind: 'array', of: 'i32', value: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { kind: 'u32', value: vocab.ids.unk }],
    ['tokenizer.ggml.bos_token_id', { kind: 'u32', value: vocab.ids.bos }],
    ['tokenizer.ggml.eos_token_id', { kind: 'u32', value: vocab.ids.imEnd ?? vocab.ids.eos }],
    ['tokenizer.ggml.padding_token_id', { kind: 'u32', value: vocab.ids.eos }],
    ['tokenizer.ggml.add_bos_token', { kind: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { kind: 'bool', value: false }],
    ['tokenizer.ggml.add_space_prefix', { kind: 'bool', value: false }],
  )
  if (options.fim) {
    md.push(
      ['tokenizer.ggml.fim_pre_token_id', { kind: 'u32', value: vocab.ids.fimPre! }],
      ['tokenizer.ggml.fim_suf_token_id', { kind: 'u32', value: vocab.ids.fimSuf! }],
      ['tokenizer.ggml.fim_mid_token_id', { kind: 'u32', value: vocab.ids.fimMid! }],
    )
  }
  if (options.chat) {
    md.push(['tokenizer.chat_template', { kind: 'string', value: buildChatTemplate({ tools: options.tools, thinking: options.thinking, thinkLevels: options.thinkLevels === true }) }])
  }
  if (options.tools && options.toolCallNudge !== undefined) {
    md.push(
      ['svc.nudge.tool_call_token', { kind: 'string', value: TOOL_CALL_OPENER }],
      ['svc.nudge.tool_call_logit_bias', { kind: 'f32', value: options.toolCallNudge }],
    )
  }
  if (options.maxJsonStringLength !== undefined) {
    md.push(['svc.nudge.json_string_max_length', { kind: 'u32', value: options.maxJsonStringLength }])
  }

  return md
}

/** The value of output column 0 per token; multiplied by the normalised bias channel (~3.6). */
function tokenBiases(vocab: TinyVocab): Float32Array {
  const b = new Float32Array(vocab.tokens.length).fill(-6) // bytes, unknown, control: effectively never
  for (const [ch, id] of vocab.charIds) {
    if (ch === SPM_SPACE) b[id] = 0.5
    else if (/[a-z]/.test(ch)) b[id] = 0.15
    else if (/[A-Z]/.test(ch)) b[id] = -0.35
    else if (/[0-9]/.test(ch)) b[id] = -0.4
    else b[id] = -0.6 // punctuation
  }
  b[vocab.byteIds[0x0a]!] = -0.9 // newline: allowed, rare
  // End of turn: reachable so a generation ends on its own now and then.
  if (vocab.ids.imEnd !== undefined) b[vocab.ids.imEnd] = -0.1
  b[vocab.ids.eos] = -0.6
  for (const id of [vocab.ids.toolCallStart, vocab.ids.toolCallEnd, vocab.ids.toolCallOpener, vocab.ids.thinkStart, vocab.ids.thinkEnd]) {
    if (id !== undefined) b[id] = -1.2
  }
  return b
}
