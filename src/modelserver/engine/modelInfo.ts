import { readGgufFileInfo, type GgufFileInfo, type Llama } from 'node-llama-cpp'
import { assertTensorDataPresent } from './ggufBounds.js'
import type { Capability, ModelInfo, ModelKind } from './Engine.js'
import { formatParameterSize } from '../gguf/formatParameterSize.js'

/** llama.cpp `llama_ftype` → Ollama's quantization label. */
const FILE_TYPES: Record<number, string> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K',
  11: 'Q3_K_S',
  12: 'Q3_K_M',
  13: 'Q3_K_L',
  14: 'Q4_K_S',
  15: 'Q4_K_M',
  16: 'Q5_K_S',
  17: 'Q5_K_M',
  18: 'Q6_K',
  19: 'IQ2_XXS',
  20: 'IQ2_XS',
  21: 'Q2_K_S',
  22: 'IQ3_XS',
  23: 'IQ3_XXS',
  24: 'IQ1_S',
  25: 'IQ4_NL',
  26: 'IQ3_S',
  27: 'IQ3_M',
  28: 'IQ2_S',
  29: 'IQ2_M',
  30: 'IQ4_XS',
  31: 'IQ1_M',
  32: 'BF16',
  36: 'TQ1_0',
  37: 'TQ2_0',
  38: 'MXFP4',
}

/** Encoder architectures llama.cpp can only embed with. */
const ENCODER_ARCHITECTURES = new Set(['bert', 'nomic-bert', 'nomic-bert-moe', 'jina-bert-v2', 'neo-bert', 'modern-bert', 't5encoder'])

const FIM_TOKEN_TEXTS = [
  ['<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>'],
  ['<fim_prefix>', '<fim_suffix>', '<fim_middle>'],
  ['<PRE>', '<SUF>', '<MID>'],
  ['<|fim▁begin|>', '<|fim▁hole|>', '<|fim▁end|>'],
] as const

/**
 * Flattens GGUF metadata to Ollama's dotted `model_info` keys (`llama.attention.head_count`). The keys come from
 * the file (a pushed or created model is user-supplied), so the result has no prototype: a key such as
 * `__proto__` or `constructor` is an own data property like any other, never a prototype write or an inherited
 * read.
 */
export function flattenMetadata(value: unknown, prefix = '', out: Record<string, unknown> = Object.create(null) as Record<string, unknown>): Record<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      flattenMetadata(v, prefix ? `${prefix}.${k}` : k, out)
    }
  } else if (prefix) {
    Object.defineProperty(out, prefix, { value: typeof value === 'bigint' ? toSafeNumber(value) : value, enumerable: true, writable: true, configurable: true })
  }
  return out
}

function toSafeNumber(v: bigint): number | string {
  return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v.toString()
}

function num(v: unknown): number | undefined {
  if (typeof v === 'number') return v
  if (typeof v === 'bigint') return Number(v)
  return undefined
}

export function modelInfoFromGguf(file: GgufFileInfo): ModelInfo {
  const metadata = flattenMetadata(file.metadata)
  const arch = String(metadata['general.architecture'] ?? 'unknown')
  const template = typeof metadata['tokenizer.chat_template'] === 'string' ? (metadata['tokenizer.chat_template'] as string) : ''

  let parameterCount = num(metadata['general.parameter_count'])
  if (parameterCount === undefined) {
    parameterCount = 0
    for (const t of file.fullTensorInfo ?? file.tensorInfo ?? []) {
      parameterCount += t.dimensions.reduce<number>((n, d) => n * Number(d), 1)
    }
    metadata['general.parameter_count'] = parameterCount
  }
  const fileType = num(metadata['general.file_type'])

  const kind = detectKind(arch, metadata)
  const capabilities: Capability[] = [kind]
  if (kind === 'completion') {
    if (/\btools\b/.test(template)) capabilities.push('tools')
    if (hasFimTokens(metadata)) capabilities.push('insert')
    if (/<think>|enable_thinking|reasoning_content|\bthinking\b/.test(template)) capabilities.push('thinking')
  }

  return {
    architecture: arch,
    parameterCount,
    parameterSize: formatParameterSize(parameterCount),
    contextLength: num(metadata[`${arch}.context_length`]) ?? 2048,
    embeddingLength: num(metadata[`${arch}.embedding_length`]) ?? 0,
    blockCount: num(metadata[`${arch}.block_count`]) ?? 0,
    quantizationLevel: fileType !== undefined ? (FILE_TYPES[fileType] ?? `unknown(${fileType})`) : 'unknown',
    fileType,
    capabilities,
    template,
    metadata,
  }
}

export function detectKind(arch: string, metadata: Record<string, unknown>): ModelKind {
  if (ENCODER_ARCHITECTURES.has(arch)) return 'embedding'
  if (metadata[`${arch}.pooling_type`] !== undefined) return 'embedding'
  return 'completion'
}

function hasFimTokens(metadata: Record<string, unknown>): boolean {
  const byId = ['fim_pre_token_id', 'fim_suf_token_id', 'fim_mid_token_id'].every((k) => metadata[`tokenizer.ggml.${k}`] !== undefined)
  const byOldId = ['prefix_token_id', 'suffix_token_id', 'middle_token_id'].every((k) => metadata[`tokenizer.ggml.${k}`] !== undefined)
  if (byId || byOldId) return true
  const tokens = metadata['tokenizer.ggml.tokens']
  if (!Array.isArray(tokens)) return false
  const set = new Set(tokens as string[])
  return FIM_TOKEN_TEXTS.some((triple) => triple.every((t) => set.has(t)))
}

/** A GGUF file's model information; with `llama`, only once the file is known to hold its whole tensor data. */
export async function readModelInfo(path: string, llama?: Llama): Promise<ModelInfo> {
  const file = await readGgufFileInfo(path, { sourceType: 'filesystem', logWarnings: false })
  if (llama) await assertTensorDataPresent(path, file, llama)
  return modelInfoFromGguf(file)
}
