import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildTinyLlama, type TinyLlamaOptions } from '../../src/modelserver/gguf/buildTinyLlama.js'
import { tinyChatModel, tinyChatOptions, tinyEmbedModel } from '../../src/modelserver/gguf/tinyModels.js'

/** Writes the default tiny models (and optional variants) to a temp dir for engine tests. */
export function writeTestModels(variants: Record<string, Partial<TinyLlamaOptions>> = {}): Record<string, string> & { chat: string; embed: string } {
  const dir = mkdtempSync(join(tmpdir(), 'engine-models-'))
  const out: Record<string, string> = {}
  out.chat = join(dir, 'chat.gguf')
  writeFileSync(out.chat, tinyChatModel().bytes)
  out.embed = join(dir, 'embed.gguf')
  writeFileSync(out.embed, tinyEmbedModel().bytes)
  for (const [name, opts] of Object.entries(variants)) {
    out[name] = join(dir, `${name}.gguf`)
    writeFileSync(out[name], buildTinyLlama({ ...tinyChatOptions, name, ...opts }).bytes)
  }
  return out as Record<string, string> & { chat: string; embed: string }
}
