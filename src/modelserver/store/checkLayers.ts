import { open, readFile } from 'node:fs/promises'
import type { ModelInfo } from '../engine/Engine.js'
import type { BlobStore } from './BlobStore.js'
import { LAYER, type Descriptor, type Manifest } from './ModelStore.js'

/**
 * The largest config, template, system, license, parameters or messages layer a model may carry. The server reads
 * each whole into memory when it loads a model; Ollama's own are a few kilobytes (a long licence ~100 KB).
 */
export const MAX_TEXT_LAYER_BYTES = 4 * 1024 * 1024

/** Why one layer of a manifest cannot be used, named by its digest. */
export type LayerProblem = { digest: string; reason: string }

/** Reads a model file's metadata (the engine's `inspect`); throws when it is not a model llama.cpp can load. */
export type Inspect = (path: string) => Promise<ModelInfo>

/** Whether a file starts with GGUF's magic. */
export async function isGguf(path: string): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const buf = Buffer.alloc(4)
    await handle.read(buf, 0, 4, 0)
    return buf.toString('latin1') === 'GGUF'
  } finally {
    await handle.close()
  }
}

/** The engine's reason a model file cannot be read, its first line, naming `shownAs` instead of the blob's path. */
export function inspectFailure(error: unknown, path: string, shownAs: string): string {
  return ((error as Error)?.message ?? String(error)).split(path).join(shownAs).split('\n')[0]!
}

/**
 * The first layer of a manifest (its config included) that would make the model unusable once stored, or
 * `undefined`. A model put through the registry side or pulled from a registry is written only if this finds
 * nothing: otherwise listing it works but every `show` or generation fails on the server, far from the mistake.
 * Checks what the server itself reads — the model file's GGUF header, the JSON of the config, parameters and
 * messages, the size of every text layer — not what only a generation decides (a template this server cannot
 * render is its own 400 there, and a model pulled for its weights may replace it).
 */
export async function layerProblem(manifest: Manifest, blobs: BlobStore, inspect: Inspect): Promise<LayerProblem | undefined> {
  const tooLarge = layerSizeProblem(manifest)
  if (tooLarge) return tooLarge
  for (const layer of [manifest.config, ...manifest.layers]) {
    const reason = await contentProblem(layer, layer === manifest.config, blobs, inspect)
    if (reason) return { digest: layer.digest, reason }
  }
  return undefined
}

/** The first text layer whose declared size is above `MAX_TEXT_LAYER_BYTES` (known from the manifest alone). */
export function layerSizeProblem(manifest: Manifest): LayerProblem | undefined {
  for (const layer of [manifest.config, ...manifest.layers]) {
    const isConfig = layer === manifest.config
    if ((isConfig || TEXT_LAYERS.has(layer.mediaType)) && layer.size > MAX_TEXT_LAYER_BYTES) {
      return { digest: layer.digest, reason: `the ${kindOf(layer, isConfig)} layer is larger than ${MAX_TEXT_LAYER_BYTES} bytes` }
    }
  }
  return undefined
}

async function contentProblem(layer: Descriptor, isConfig: boolean, blobs: BlobStore, inspect: Inspect): Promise<string | undefined> {
  const path = blobs.path(layer.digest)
  if (layer.mediaType === LAYER.model) {
    if (!(await isGguf(path))) return 'the model layer is not a GGUF file'
    try {
      await inspect(path)
    } catch (error) {
      return `the model layer cannot be read: ${inspectFailure(error, path, layer.digest)}`
    }
    return undefined
  }
  const json = isConfig || layer.mediaType === LAYER.params || layer.mediaType === LAYER.messages
  if (!json) return undefined
  let value: unknown
  try {
    value = JSON.parse((await readFile(path)).toString('utf8'))
  } catch {
    return `the ${kindOf(layer, isConfig)} layer is not JSON`
  }
  if (layer.mediaType === LAYER.messages && !isMessageList(value)) return 'the messages layer is not a list of {role, content} messages'
  if (layer.mediaType !== LAYER.messages && !isPlainObject(value)) return `the ${kindOf(layer, isConfig)} layer is not a JSON object`
  return undefined
}

const TEXT_LAYERS: ReadonlySet<string> = new Set([LAYER.template, LAYER.system, LAYER.license, LAYER.params, LAYER.messages])

function kindOf(layer: Descriptor, isConfig: boolean): string {
  return isConfig ? 'config' : layer.mediaType.slice(layer.mediaType.lastIndexOf('.') + 1)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isMessageList(value: unknown): boolean {
  return Array.isArray(value) && value.every((m) => isPlainObject(m) && typeof m.role === 'string' && typeof m.content === 'string')
}
