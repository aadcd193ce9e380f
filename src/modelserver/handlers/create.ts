import { open } from 'node:fs/promises'
import { ModelServerError, badRequest, modelNotFound } from '../errors.js'
import type { ModelServerContext } from '../ModelServerContext.js'
import { NDJSON } from '../http/NdjsonChannel.js'
import { assertDigest } from '../store/BlobStore.js'
import { parseModelName } from '../store/ModelName.js'
import { promptTemplateOf } from '../template/promptTemplate.js'
import { LAYER, newManifest, type Descriptor, type ModelConfig } from '../store/ModelStore.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'
import type { CreateRequest } from '../../../generated/modelserver/types.gen.js'

async function isGguf(path: string): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const buf = Buffer.alloc(4)
    await handle.read(buf, 0, 4, 0)
    return buf.toString('latin1') === 'GGUF'
  } finally {
    await handle.close()
  }
}

/**
 * `/api/create`: from an existing model (`from`) and/or GGUF blobs (`files`), with system, template,
 * parameters, messages and license layers. All checks run before the first byte is sent, so mistakes get
 * their 4xx; the progress lines are then replayed (or `{status: success}` when not streaming).
 */
export async function createModel(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const body = req.body as CreateRequest
  const name = body.model ?? body.name
  if (!name) throw badRequest('model is required')
  const target = parseModelName(name)
  if (body.quantize) {
    throw badRequest(`quantization is not supported by this server (requested "${body.quantize}"); upload an already quantized GGUF`)
  }
  if (body.adapters && Object.keys(body.adapters).length > 0) throw badRequest('adapters are not supported by this server')
  // A template this server cannot render is refused now, not at the first generation.
  if (body.template) promptTemplateOf(body.template)
  const files = Object.entries(body.files ?? {})
  if (!body.from && files.length === 0) throw badRequest("neither 'from' or 'files' was specified")
  if (files.length > 1) throw badRequest('only one model file (a single GGUF) is supported')

  const status: Array<Record<string, unknown>> = []
  let layers: Descriptor[] = []
  let config: ModelConfig | undefined
  let baseParams: Record<string, unknown> = {}
  if (body.from) {
    const base = await ctx.store.get(parseModelName(body.from))
    if (!base) throw modelNotFound(body.from)
    const record = await ctx.store.resolve(base)
    layers = base.manifest.layers.map((l) => ({ ...l }))
    config = record.config
    baseParams = record.parameters ?? {}
  }
  for (const [file, digest] of files) {
    assertDigest(digest)
    const path = ctx.store.blobs.path(digest)
    if (!(await ctx.store.blobs.has(digest))) throw badRequest(`blob ${digest} for '${file}' not found; upload it with POST /api/blobs/${digest}`)
    status.push({ status: 'parsing GGUF' })
    if (!(await isGguf(path))) throw badRequest(`invalid model file '${file}': not a GGUF file`)
    let info
    try {
      info = await ctx.engine.inspect(path)
    } catch (error) {
      throw new ModelServerError('invalid_model_file', `invalid model file '${file}': ${(error as Error).message}`, 400, { cause: error })
    }
    const size = (await ctx.store.blobs.size(digest)) ?? 0
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
    layers.push(await ctx.store.putLayer(mediaType, content))
  }
  await setLayer(LAYER.template, body.template)
  await setLayer(LAYER.system, body.system)
  if (body.license !== undefined) {
    layers = layers.filter((l) => l.mediaType !== LAYER.license)
    for (const text of Array.isArray(body.license) ? body.license : [body.license]) {
      if (text !== '') layers.push(await ctx.store.putLayer(LAYER.license, text))
    }
  }
  if (body.parameters !== undefined) {
    const merged = { ...baseParams, ...body.parameters }
    await setLayer(LAYER.params, Object.keys(merged).length > 0 ? JSON.stringify(merged) : '')
  }
  if (body.messages !== undefined) {
    const messages = body.messages.map((m) => ({ role: m.role, content: m.content }))
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
  const configDescriptor = await ctx.store.putConfig(finalConfig)
  status.push({ status: 'writing manifest' })
  await ctx.store.put(target, newManifest(configDescriptor, layers))
  status.push({ status: 'success' })
  if (body.stream === false) return { status: 200, body: { status: 'success' } }
  return { status: 200, contentType: NDJSON, body: `${status.map((s) => JSON.stringify(s)).join('\n')}\n` }
}
