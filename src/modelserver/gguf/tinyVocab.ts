/**
 * The vocabulary of the tiny models: a SentencePiece (`llama`) tokenizer made only of single characters
 * and byte fallbacks, so any text tokenises (one token per printable ASCII character, bytes otherwise).
 */

export const TokenType = { normal: 1, unknown: 2, control: 3, userDefined: 4, byte: 6 } as const

export type TinyVocabOptions = {
  /** ChatML turn markers `<|im_start|>`, `<|im_end|>`. */
  chatml: boolean
  /** `<tool_call>` / `</tool_call>` (Hermes/Qwen style tool calls). */
  tools: boolean
  /** `<think>` / `</think>`. */
  thinking: boolean
  /** Fill-in-the-middle markers `<|fim_prefix|>`, `<|fim_suffix|>`, `<|fim_middle|>`. */
  fim: boolean
}

export type TinyVocab = {
  tokens: string[]
  types: number[]
  scores: number[]
  ids: {
    unk: number
    bos: number
    eos: number
    imStart?: number
    imEnd?: number
    toolCallStart?: number
    toolCallEnd?: number
    toolCallOpener?: number
    thinkStart?: number
    thinkEnd?: number
    fimPre?: number
    fimSuf?: number
    fimMid?: number
  }
  /** ids of the single-character tokens, by character (`▁` stands for the space). */
  charIds: Map<string, number>
  /** id of the byte-fallback token for each byte value. */
  byteIds: number[]
}

/** The text that opens a tool call in the tiny chat template. */
export const TOOL_CALL_OPENER = '<tool_call>\n{"name": "'

/** SentencePiece's visible space. */
export const SPM_SPACE = '\u2581'

export function buildTinyVocab(options: TinyVocabOptions): TinyVocab {
  const tokens: string[] = []
  const types: number[] = []
  const scores: number[] = []
  const add = (text: string, type: number, score = 0): number => {
    tokens.push(text)
    types.push(type)
    scores.push(score)
    return tokens.length - 1
  }
  const unk = add('<unk>', TokenType.unknown)
  const bos = add('<s>', TokenType.control)
  const eos = add('</s>', TokenType.control)
  const byteIds: number[] = []
  for (let b = 0; b < 256; b++) {
    byteIds.push(add(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`, TokenType.byte))
  }
  const charIds = new Map<string, number>()
  // The space first, then printable ASCII; scores only rank single pieces (there are no merges).
  charIds.set(SPM_SPACE, add(SPM_SPACE, TokenType.normal, -1))
  for (let c = 0x21; c <= 0x7e; c++) {
    const ch = String.fromCharCode(c)
    charIds.set(ch, add(ch, TokenType.normal, -2 - (c - 0x21) / 100))
  }
  const ids: TinyVocab['ids'] = { unk, bos, eos }
  if (options.chatml) {
    ids.imStart = add('<|im_start|>', TokenType.control)
    ids.imEnd = add('<|im_end|>', TokenType.control)
  }
  if (options.tools) {
    ids.toolCallStart = add('<tool_call>', TokenType.userDefined)
    ids.toolCallEnd = add('</tool_call>', TokenType.userDefined)
    // The whole opener of a Hermes-style call as one piece, so a single logit bias can start a call.
    ids.toolCallOpener = add(TOOL_CALL_OPENER, TokenType.userDefined)
  }
  if (options.thinking) {
    ids.thinkStart = add('<think>', TokenType.userDefined)
    ids.thinkEnd = add('</think>', TokenType.userDefined)
  }
  if (options.fim) {
    ids.fimPre = add('<|fim_prefix|>', TokenType.control)
    ids.fimSuf = add('<|fim_suffix|>', TokenType.control)
    ids.fimMid = add('<|fim_middle|>', TokenType.control)
  }
  return { tokens, types, scores, ids, charIds, byteIds }
}
