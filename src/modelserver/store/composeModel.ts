import type { ModelInfo } from '../engine/Engine.js'
import { ModelServerError, badRequest, modelNotFound } from '../errors.js'
import { assertDigest } from './BlobStore.js'
import { inspectFailure, isGguf } from './checkLayers.js'
import { parseModelName, type ModelName } from './ModelName.js'
import { LAYER, newManifest, type BlobLease, type Descriptor, type ModelConfig, type ModelStore } from './ModelStore.js'

/** What `/api/create` asks for: a base model and/or one GGUF blob, and the layers to set (`''` removes one). */
export type ModelSpec = {
  target: ModelName
  from?: string | undefined
  /** `[file name, sha256 digest]` of uploaded blobs (one GGUF). */
  files: Array<[string, string]>
  template?: string | undefined
  system?: string | undefined
  license?: string | string[] | undefined
  parameters?: Record<string, unknown> | undefined
  messages?: Array<{ role: string; content: string }> | undefined
}

/**
 * Builds and writes the manifest of a new model: the base model's layers, the GGUF (its metadata read by
 * `inspect`), then the text layers. Every check runs before the manifest is written. Every blob the manifest will
 * reference is pinned before it is checked or written, so a concurrent delete cannot remove it in between.
 * Returns Ollama's progress statuses, in order.
 */
export async function composeModel(store: ModelStore, inspect: (path: string) => Promise<ModelInfo>, spec: ModelSpec): Promise<Array<Record<string, unknown>>> {
  return store.withLease((lease) => compose(store, inspect, spec, lease))
}

async function compose(
  store: ModelStore,
  inspect: (path: string) => Promise<ModelInfo>,
  spec: ModelSpec,
  lease: BlobLease,
): Promise<Array<Record<string, unknown>>> {
  const status: Array<Record<string, unknown>> = []
  let layers: Descriptor[] = []
  let config: ModelConfig | undefined
  let baseParams: Record<string, unknown> = {}
  if (spec.from) {
    const base = await store.getPinned(parseModelName(spec.from), lease)
    if (!base) throw modelNotFound(spec.from)
    const record = await store.resolve(base)
    layers = base.manifest.layers.map((l) => ({ ...l }))
    config = record.config
    baseParams = record.parameters ?? {}
  }
  for (const [file, digest] of spec.files) {
    assertDigest(digest)
    const path = store.blobs.path(digest)
    await lease.pin([digest])
    if (!(await store.blobs.has(digest))) throw badRequest(`blob ${digest} for '${file}' not found; upload it with POST /api/blobs/${digest}`)
    status.push({ status: 'parsing GGUF' })
    if (!(await isGguf(path))) throw badRequest(`invalid model file '${file}': not a GGUF file`)
    let info
    try {
      info = await inspect(path)
    } catch (error) {
      // The engine's message names the blob's absolute path: the client gets the file name it sent instead.
      throw new ModelServerError('invalid_model_file', `invalid model file '${file}': ${inspectFailure(error, path, file)}`, { cause: error })
    }
    const size = (await store.blobs.size(digest)) ?? 0
    layers = layers.filter((l) => l.mediaType !== LAYER.model)
    layers.unshift({ mediaType: LAYER.model, digest, size })
    config = {
      model_format: 'gguf',
      model_family: info.architecture,
      model_families: [info.architecture],
      model_type: info.parameterSize,
      file_type: info.quantizationLevel,
      architecture: 'amd64',
      os: 'linux',
      rootfs: { type: 'layers', diff_ids: [] },
      capabilities: info.capabilities,
    }
  }
  const existing = new Set(layers.map((l) => l.digest))
  const setLayer = async (mediaType: string, content: string | undefined) => {
    if (content === undefined) return
    layers = layers.filter((l) => l.mediaType !== mediaType)
    if (content === '') return
    layers.push(await store.putLayer(mediaType, content, lease))
  }
  await setLayer(LAYER.template, spec.template)
  await setLayer(LAYER.system, spec.system)
  if (spec.license !== undefined) {
    layers = layers.filter((l) => l.mediaType !== LAYER.license)
    for (const text of Array.isArray(spec.license) ? spec.license : [spec.license]) {
      if (text !== '') layers.push(await store.putLayer(LAYER.license, text, lease))
    }
  }
  if (spec.parameters !== undefined) {
    const merged = { ...baseParams, ...spec.parameters }
    await setLayer(LAYER.params, Object.keys(merged).length > 0 ? JSON.stringify(merged) : '')
  }
  if (spec.messages !== undefined) {
    const messages = spec.messages.map((m) => ({ role: m.role, content: m.content }))
    await setLayer(LAYER.messages, messages.length > 0 ? JSON.stringify(messages) : '')
  }
  if (!layers.some((l) => l.mediaType === LAYER.model)) throw badRequest('the model has no model file')
  for (const l of layers) {
    status.push({ status: existing.has(l.digest) ? `using existing layer ${l.digest}` : `creating new layer ${l.digest}` })
  }
  const finalConfig: ModelConfig = {
    ...(config ?? {
      model_format: 'gguf',
      model_family: '',
      model_families: [],
      model_type: '',
      file_type: '',
      architecture: 'amd64',
      os: 'linux',
    }),
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.digest) },
  } as ModelConfig
  const configDescriptor = await store.putConfig(finalConfig, lease)
  status.push({ status: 'writing manifest' })
  await store.put(spec.target, newManifest(configDescriptor, layers))
  status.push({ status: 'success' })
  return status
}
