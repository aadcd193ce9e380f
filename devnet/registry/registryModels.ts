/**
 * What the devnet model registry serves: small models in Ollama's layout — an OCI image manifest (schema 2)
 * whose config blob is the Ollama image config and whose layers are the GGUF weights
 * (`application/vnd.ollama.image.model`), the default parameters and a license, as registry.ollama.ai serves
 * `library/<model>:<tag>`. The weights are the project's tiny llama-architecture test model with a seed of its
 * own, so a pull downloads bytes no model server has yet (a model server already holding a layer skips it).
 */
import { createHash } from 'node:crypto'
import { buildTinyLlama, formatParameterSize, tinyChatOptions } from '../../src/modelserver/gguf/index.js'

export const MANIFEST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.v2+json'
const CONFIG_MEDIA_TYPE = 'application/vnd.docker.container.image.v1+json'

export type Blob = { digest: string; mediaType: string; bytes: Uint8Array }

/** One repository tag: `library/tiny-chat:latest` and the blobs its manifest names. */
export type RegistryModel = {
  /** `<namespace>/<repository>`. */
  repository: string
  tag: string
  manifest: Uint8Array
  /** `sha256:<hex>` of the manifest bytes (the `Docker-Content-Digest`). */
  digest: string
  blobs: Blob[]
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`
const blob = (mediaType: string, bytes: Uint8Array): Blob => ({ digest: sha256(bytes), mediaType, bytes })
const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

/** The devnet's one model, `library/tiny-chat:latest` (also tagged `1m`): a chat model of about 0.5 MB. */
export function devnetModels(): RegistryModel[] {
  const built = buildTinyLlama({
    ...tinyChatOptions,
    name: 'devnet-tiny-chat',
    seed: 0xde7_0e7,
    description: 'Tiny llama-architecture chat model served by the devnet model registry; random seeded weights, its text is not meaningful.',
  })
  const layers = [
    blob('application/vnd.ollama.image.model', built.bytes),
    blob('application/vnd.ollama.image.params', json({ temperature: 0, num_ctx: 2048 })),
    blob('application/vnd.ollama.image.license', new TextEncoder().encode('Test model of the pay2store devnet. Random weights; no licence terms apply.\n')),
  ]
  const config = blob(
    CONFIG_MEDIA_TYPE,
    json({
      model_format: 'gguf',
      model_family: 'llama',
      model_families: ['llama'],
      model_type: formatParameterSize(built.parameterCount),
      file_type: 'F32',
      architecture: 'amd64',
      os: 'linux',
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.digest) },
    }),
  )
  const descriptor = (b: Blob) => ({ mediaType: b.mediaType, digest: b.digest, size: b.bytes.byteLength })
  const manifest = json({ schemaVersion: 2, mediaType: MANIFEST_MEDIA_TYPE, config: descriptor(config), layers: layers.map(descriptor) })
  const model = { repository: 'library/tiny-chat', manifest, digest: sha256(manifest), blobs: [config, ...layers] }
  return [
    { ...model, tag: 'latest' },
    { ...model, tag: '1m' },
  ]
}
