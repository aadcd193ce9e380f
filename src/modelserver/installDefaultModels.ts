import { tinyChatModel, tinyEmbedModel, type TinyModelDescriptor } from './gguf/index.js'
import { parseModelName } from './store/ModelName.js'
import { LAYER, newManifest, type ModelStore } from './store/ModelStore.js'

/**
 * First run: writes the project's two deterministic tiny models into the store (`svc-tiny-chat:latest`,
 * `svc-tiny-embed:latest`) unless a model with that name exists. Returns the names installed.
 */
export async function installDefaultModels(store: ModelStore, models: TinyModelDescriptor[] = [tinyChatModel(), tinyEmbedModel()]): Promise<string[]> {
  const installed: string[] = []
  for (const model of models) {
    const name = parseModelName(model.name)
    if (await store.get(name)) continue
    await store.withLease(async (lease) => {
      await lease.pin([model.digest])
      const blob = await store.blobs.putBytes(model.bytes)
      if (blob.digest !== model.digest) throw new Error(`${model.name}: digest ${blob.digest} != ${model.digest}`)
      const layers = [{ mediaType: LAYER.model, digest: blob.digest, size: blob.size }]
      const config = await store.putConfig(
        {
          model_format: model.format,
          model_family: model.family,
          model_families: [model.family],
          model_type: model.parameterSize,
          file_type: model.quantizationLevel,
          architecture: 'amd64',
          os: 'linux',
          rootfs: { type: 'layers', diff_ids: layers.map((l) => l.digest) },
          capabilities: model.capabilities,
        },
        lease,
      )
      await store.put(name, newManifest(config, layers))
    })
    installed.push(model.name)
  }
  return installed
}
