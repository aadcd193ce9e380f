import { createHash } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readGgufFileInfo } from 'node-llama-cpp'
import { describe, expect, it } from 'vitest'
import { writeGguf } from './GgufWriter.js'
import { buildTinyLlama } from './buildTinyLlama.js'
import { formatParameterSize } from './formatParameterSize.js'
import { buildTinyChatModel, buildTinyEmbedModel, tinyChatModel, tinyChatOptions, tinyEmbedModel } from './tinyModels.js'

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

describe('GGUF writer', () => {
  it('writes a GGUF v3 header, typed metadata and 32-byte aligned tensor data', async () => {
    const bytes = writeGguf({
      metadata: [
        ['general.architecture', { kind: 'string', value: 'llama' }],
        ['test.u32', { kind: 'u32', value: 7 }],
        ['test.f32', { kind: 'f32', value: 0.5 }],
        ['test.bool', { kind: 'bool', value: true }],
        ['test.u64', { kind: 'u64', value: 2n ** 40n }],
        ['test.strings', { kind: 'array', of: 'string', value: ['a', 'bc'] }],
        ['test.ints', { kind: 'array', of: 'i32', value: [-1, 2] }],
      ],
      tensors: [
        { name: 'a', dims: [3], data: new Float32Array([1, 2, 3]) },
        { name: 'b', dims: [2, 2], data: new Float32Array([4, 5, 6, 7]) },
      ],
    })
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('GGUF')
    expect(view.getUint32(4, true)).toBe(3)
    expect(view.getBigUint64(8, true)).toBe(2n)
    expect(view.getBigUint64(16, true)).toBe(7n)
    expect(bytes.length % 32).toBe(0)

    const dir = mkdtempSync(join(tmpdir(), 'gguf-'))
    const path = join(dir, 'x.gguf')
    writeFileSync(path, bytes)
    const info = await readGgufFileInfo(path, { sourceType: 'filesystem', logWarnings: false })
    expect(info.version).toBe(3)
    const md = info.metadata as unknown as Record<string, Record<string, unknown>>
    expect(md.general!.architecture).toBe('llama')
    expect(md.test).toMatchObject({ u32: 7, f32: 0.5, bool: true, strings: ['a', 'bc'], ints: [-1, 2] })
    expect(BigInt(md.test!.u64 as bigint)).toBe(2n ** 40n)
    expect(info.tensorInfo?.map((t) => [t.name, t.dimensions.map(Number), t.offset])).toEqual([
      ['a', [3], 0],
      ['b', [2, 2], 32],
    ])
  })

  it('rejects a tensor whose data does not match its dimensions', () => {
    expect(() => writeGguf({ metadata: [], tensors: [{ name: 'x', dims: [2, 2], data: new Float32Array(3) }] })).toThrow(/need 4/)
  })
})

describe('tiny default models', () => {
  it('are byte-for-byte deterministic (pinned digests)', () => {
    const a = buildTinyChatModel()
    const b = buildTinyChatModel()
    expect(sha(a)).toBe(sha(b))
    expect(sha(buildTinyEmbedModel())).toBe(sha(buildTinyEmbedModel()))
    // Pinned: a change here changes every installed default model's digest — do it on purpose.
    expect(tinyChatModel().digest).toBe(`sha256:${sha(a)}`)
    expect({ chat: tinyChatModel().digest, embed: tinyEmbedModel().digest }).toMatchInlineSnapshot(`
      {
        "chat": "sha256:e1d928bb11bcfecf4121c7a68a8702b9af05113c5d4dace28e8e7137bf7a3c50",
        "embed": "sha256:699db6a6810de25f9da37d046e107b69a4009f42e188293ad70b38690cb9586d",
      }
    `)
  })

  it('describe themselves honestly (family, parameter size, capabilities)', () => {
    const chat = tinyChatModel()
    expect(chat).toMatchObject({ name: 'svc-tiny-chat:latest', family: 'llama', format: 'gguf', quantizationLevel: 'F32' })
    expect(chat.capabilities).toEqual(['completion', 'tools', 'insert'])
    expect(chat.parameterSize).toBe(formatParameterSize(chat.parameterCount))
    expect(chat.bytes.length).toBeGreaterThan(chat.parameterCount * 4) // f32 weights + header
    expect(chat.bytes.length).toBeLessThan(1024 * 1024)
    const embed = tinyEmbedModel()
    expect(embed).toMatchObject({ name: 'svc-tiny-embed:latest', family: 'llama', capabilities: ['embedding'] })
    expect(chat.description).toMatch(/not meaningful/)
  })

  it('carry a llama hyper-parameter set, a byte-fallback SentencePiece vocab and a ChatML template', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gguf-'))
    const path = join(dir, 'chat.gguf')
    writeFileSync(path, tinyChatModel().bytes)
    const info = await readGgufFileInfo(path, { sourceType: 'filesystem', logWarnings: false })
    const md = info.metadata as unknown as {
      general: Record<string, unknown>
      llama: Record<string, unknown> & { attention: Record<string, unknown> }
      tokenizer: { ggml: { model: string; tokens: string[]; token_type: number[] }; chat_template: string }
    }
    expect(md.general.architecture).toBe('llama')
    expect(md.llama).toMatchObject({ context_length: 2048, embedding_length: 64, block_count: 2, feed_forward_length: 128 })
    expect(md.llama.attention.head_count).toBe(4)
    expect(md.tokenizer.ggml.model).toBe('llama')
    const bytes = md.tokenizer.ggml.tokens.filter((t) => /^<0x[0-9A-F]{2}>$/.test(t))
    expect(bytes).toHaveLength(256)
    expect(md.tokenizer.chat_template).toContain('<|im_start|>')
    expect(md.tokenizer.chat_template).toContain('<tool_call>')
    expect(Number(md.general.parameter_count)).toBe(tinyChatModel().parameterCount)
  })

  it('formats parameter sizes like Ollama', () => {
    expect(formatParameterSize(1_700_000_000)).toBe('1.7B')
    expect(formatParameterSize(135_000_000)).toBe('135M')
    expect(formatParameterSize(128_580)).toBe('128.58K')
    expect(formatParameterSize(999)).toBe('999')
  })

  it('a different seed gives different weights', () => {
    const other = buildTinyLlama({ ...tinyChatOptions, seed: 1 }).bytes
    expect(sha(other)).not.toBe(sha(buildTinyChatModel()))
  })
})
