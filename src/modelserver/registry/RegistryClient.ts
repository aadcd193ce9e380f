import { createReadStream } from 'node:fs'
import { Readable } from 'node:stream'
import { ModelServerError } from '../errors.js'
import { DEFAULT_REGISTRY_HOST, fullName, type ModelName } from '../store/ModelName.js'
import { layerProblem, layerSizeProblem, type Inspect } from '../store/checkLayers.js'
import { isDescriptor, MANIFEST_MEDIA_TYPE, type BlobLease, type Descriptor, type Manifest, type ModelStore } from '../store/ModelStore.js'
import { RegistryEgress, type HostResolver } from './RegistryEgress.js'
import { summariseRegistryAnswer } from './summariseRegistryAnswer.js'

export type Progress = { status: string; digest?: string; total?: number; completed?: number }

export type RegistryClientOptions = {
  store: ModelStore
  /** Base URL used for names on the default host (`registry.ollama.ai`). */
  registryUrl: string
  /** `host[:port]` of the registries a name may address (`MODELSERVER_REGISTRIES`); default Ollama's. */
  registries?: ReadonlyArray<string>
  resolve?: HostResolver
  fetch?: typeof fetch
  /** Bytes per PATCH when pushing. */
  chunkBytes?: number
  /** The largest layer a pull takes (`MODELSERVER_MAX_BLOB_BYTES`), whatever its manifest declares. */
  maxBlobBytes?: number
  /** Reads a pulled model file's metadata: a model that could not be loaded is not written (`layerProblem`). */
  inspect: Inspect
}

/** The largest manifest a pull reads (Ollama's are a few hundred bytes; each layer adds about 150). */
const MAX_MANIFEST_BYTES = 4 << 20

const PROGRESS_STEP = 1 << 20

function isLoopback(host: string): boolean {
  const h = host.replace(/:[0-9]+$/, '')
  return h === 'localhost' || h === '::1' || h === '[::1]' || /^127\./.test(h)
}

/**
 * Pull and push over the OCI distribution protocol (what Ollama's registry speaks):
 * `GET/PUT /v2/<ns>/<name>/manifests/<tag>`, `GET/HEAD /v2/<ns>/<name>/blobs/<digest>`,
 * `POST /v2/<ns>/<name>/blobs/uploads/` then `PATCH` and `PUT ?digest=`.
 * A failure of the registry (unreachable, an unexpected answer, a bad manifest or bytes) is 502 Bad Gateway: a
 * third party's failure, not ours (Ollama answers 500 for every pull error; any non-2xx is an error to its
 * clients, so they read the same `{error}` message). Only an unknown manifest is 404.
 */
export class RegistryClient {
  private readonly egress: RegistryEgress
  private readonly chunkBytes: number

  constructor(private readonly options: RegistryClientOptions) {
    this.egress = new RegistryEgress({ allowed: options.registries ?? [DEFAULT_REGISTRY_HOST], resolve: options.resolve, fetch: options.fetch })
    this.chunkBytes = options.chunkBytes ?? 8 << 20
  }

  /** `https://host`, `http://host` for loopback hosts or with `insecure`, the configured URL for the default host. */
  baseUrl(name: ModelName, insecure: boolean): string {
    if (name.host === DEFAULT_REGISTRY_HOST) return this.options.registryUrl
    if (!insecure && !isLoopback(name.host)) return `https://${name.host}`
    return `http://${name.host}`
  }

  private repoUrl(name: ModelName, insecure: boolean): string {
    return `${this.baseUrl(name, insecure)}/v2/${name.namespace}/${name.model}`
  }

  /** 400 when the name's registry is not allow-listed: checked before a streamed answer starts. */
  assertAllowed(name: ModelName): void {
    this.egress.assertAllowed(name)
  }

  private request(url: string, init: RequestInit, what: string): Promise<Response> {
    return this.egress.send(url, init, what)
  }

  /** An upload location on another origin than the registry's would send the model's bytes wherever it says. */
  private uploadUrl(location: string, base: string, what: string): URL {
    const url = new URL(location, base)
    if (url.origin !== new URL(base).origin) {
      throw new ModelServerError('registry_refused', `${what}: registry sent an upload location on another host; not followed`)
    }
    return url
  }

  async pull(name: ModelName, params: { insecure: boolean; signal?: AbortSignal; onProgress: (p: Progress) => void }): Promise<void> {
    const { onProgress, signal } = params
    const store = this.options.store
    this.egress.assertAllowed(name)
    onProgress({ status: 'pulling manifest' })
    const base = this.repoUrl(name, params.insecure)
    const res = await this.request(
      `${base}/manifests/${name.tag}`,
      { headers: { accept: MANIFEST_MEDIA_TYPE }, signal },
      'pull model manifest',
    )
    if (res.status === 404) {
      await res.body?.cancel()
      throw new ModelServerError('manifest_unknown', 'pull model manifest: file does not exist')
    }
    if (!res.ok) throw new ModelServerError('registry_error', `pull model manifest: ${await summariseRegistryAnswer(res)}`)
    const manifestBytes = await readBounded(res, MAX_MANIFEST_BYTES)
    if (!manifestBytes) throw new ModelServerError('registry_manifest_invalid', `pull model manifest: larger than ${MAX_MANIFEST_BYTES} bytes`)
    let manifest: Manifest
    const maxBlob = this.options.maxBlobBytes ?? Infinity
    try {
      manifest = JSON.parse(manifestBytes.toString('utf8')) as Manifest
      if (!manifest.config || !Array.isArray(manifest.layers)) throw new Error('missing config or layers')
      for (const d of [manifest.config, ...manifest.layers] as unknown[]) {
        // a whole size, which bounds what the layer's download may write, within the server's own bound
        if (!isDescriptor(d)) throw new Error(`a descriptor without a sha256 digest, a media type and a whole size: ${JSON.stringify(d)?.slice(0, 200)}`)
        if (d.size > maxBlob) throw new Error(`layer ${d.digest} declares ${d.size} bytes, above MODELSERVER_MAX_BLOB_BYTES (${maxBlob})`)
      }
      const tooLarge = layerSizeProblem(manifest)
      if (tooLarge) throw new Error(`layer ${tooLarge.digest}: ${tooLarge.reason}`)
    } catch (error) {
      throw new ModelServerError('registry_manifest_invalid', `pull model manifest: invalid manifest (${(error as Error).message})`)
    }
    await store.withLease(async (lease) => {
      // Pinned before the first presence check: a layer found present stays present until the manifest is written.
      await lease.pin([manifest.config, ...manifest.layers].map((d) => d.digest))
      await this.download(base, manifest, { signal, onProgress })
      // What the registry sent must make a model this server can show and run before it is listed.
      const problem = await layerProblem(manifest, store.blobs, this.options.inspect)
      if (problem) throw new ModelServerError('registry_manifest_invalid', `pull model manifest: layer ${problem.digest}: ${problem.reason}`)
      onProgress({ status: 'writing manifest' })
      await store.putRaw(name, manifestBytes)
    })
    onProgress({ status: 'success' })
  }

  /** Downloads the layers that are not present yet to temporary files, then verifies and commits them. */
  private async download(base: string, manifest: Manifest, params: { signal?: AbortSignal | undefined; onProgress: (p: Progress) => void }) {
    const { signal, onProgress } = params
    const store = this.options.store
    const downloaded: Array<{ tmp: string; digest: string }> = []
    try {
      for (const layer of [...manifest.layers, manifest.config]) {
        const status = `downloading ${layer.digest}`
        if (await store.blobs.has(layer.digest)) {
          onProgress({ status, digest: layer.digest, total: layer.size, completed: layer.size })
          continue
        }
        onProgress({ status, digest: layer.digest, total: layer.size, completed: 0 })
        const blob = await this.request(`${base}/blobs/${layer.digest}`, { signal }, `pull ${layer.digest}`)
        if (!blob.ok || !blob.body) {
          await blob.body?.cancel()
          throw new ModelServerError('registry_error', `pull ${layer.digest}: registry answered ${blob.status}`)
        }
        let reported = 0
        const onBytes = (completed: number) => {
          if (completed - reported < PROGRESS_STEP) return
          reported = completed
          onProgress({ status, digest: layer.digest, total: layer.size, completed })
        }
        // No more than the manifest declared (a whole size within the server's bound, checked with the manifest): a
        // registry cannot fill the disk by sending a layer without end.
        const { path, size } = await store.blobs.writeTemp(Readable.fromWeb(blob.body as never), onBytes, undefined, layer.size).catch((error: unknown) => {
          if (error instanceof ModelServerError && error.code === 'blob_too_large')
            throw new ModelServerError('registry_error', `pull ${layer.digest}: the registry sent more than the ${layer.size} bytes its manifest declares`)
          throw error
        })
        downloaded.push({ tmp: path, digest: layer.digest })
        if (reported !== size) onProgress({ status, digest: layer.digest, total: layer.size, completed: size })
      }
      onProgress({ status: 'verifying sha256 digest' })
      while (downloaded.length > 0) {
        const { tmp, digest } = downloaded[0]!
        try {
          await store.blobs.commit(tmp, digest)
        } catch (error) {
          if (error instanceof ModelServerError && error.code === 'digest_mismatch') {
            throw new ModelServerError('registry_digest_mismatch', `digest mismatch, file must be downloaded again: ${error.shortMessage}`)
          }
          throw error
        }
        downloaded.shift()
      }
    } finally {
      for (const d of downloaded) await store.blobs.discard(d.tmp)
    }
  }

  async push(name: ModelName, params: { insecure: boolean; signal?: AbortSignal; onProgress: (p: Progress) => void }): Promise<void> {
    this.egress.assertAllowed(name)
    return this.options.store.withLease((lease) => this.pushPinned(name, lease, params))
  }

  /** Pushes with the model's blobs pinned: a concurrent delete of the model cannot remove them mid-push. */
  private async pushPinned(
    name: ModelName,
    lease: BlobLease,
    params: { insecure: boolean; signal?: AbortSignal; onProgress: (p: Progress) => void },
  ): Promise<void> {
    const { onProgress, signal } = params
    const entry = await this.options.store.getPinned(name, lease)
    if (!entry) throw new ModelServerError('model_not_found', `model '${fullName(name)}' not found`)
    onProgress({ status: 'retrieving manifest' })
    const manifestBytes = entry.bytes
    const base = this.repoUrl(name, params.insecure)
    for (const layer of [...entry.manifest.layers, entry.manifest.config]) {
      await this.pushBlob(base, layer, signal, onProgress)
    }
    onProgress({ status: 'pushing manifest' })
    const res = await this.request(
      `${base}/manifests/${name.tag}`,
      { method: 'PUT', headers: { 'content-type': MANIFEST_MEDIA_TYPE }, body: new Uint8Array(manifestBytes), signal },
      'push manifest',
    )
    if (!res.ok) throw new ModelServerError('registry_error', `push manifest: ${await summariseRegistryAnswer(res)}`)
    await res.body?.cancel()
    onProgress({ status: 'success' })
  }

  private async pushBlob(base: string, layer: Descriptor, signal: AbortSignal | undefined, onProgress: (p: Progress) => void) {
    const status = `pushing ${layer.digest}`
    const head = await this.request(`${base}/blobs/${layer.digest}`, { method: 'HEAD', signal }, `push ${layer.digest}`)
    await head.body?.cancel()
    if (head.ok) {
      onProgress({ status, digest: layer.digest, total: layer.size, completed: layer.size })
      return
    }
    onProgress({ status, digest: layer.digest, total: layer.size, completed: 0 })
    const start = await this.request(`${base}/blobs/uploads/`, { method: 'POST', signal }, `push ${layer.digest}`)
    await start.body?.cancel()
    let location = start.headers.get('location')
    if (start.status !== 202 || !location) {
      throw new ModelServerError('registry_error', `push ${layer.digest}: upload not started (${start.status})`)
    }
    let completed = 0
    const file = createReadStream(this.options.store.blobs.path(layer.digest), { highWaterMark: this.chunkBytes })
    for await (const chunk of file as AsyncIterable<Buffer>) {
      const url = this.uploadUrl(location, base, `push ${layer.digest}`).toString()
      const res = await this.request(
        url,
        {
          method: 'PATCH',
          headers: {
            'content-type': 'application/octet-stream',
            'content-range': `${completed}-${completed + chunk.length - 1}`,
          },
          body: new Uint8Array(chunk),
          signal,
        },
        `push ${layer.digest}`,
      )
      await res.body?.cancel()
      if (res.status !== 202) throw new ModelServerError('registry_error', `push ${layer.digest}: chunk rejected (${res.status})`)
      location = res.headers.get('location') ?? location
      completed += chunk.length
      onProgress({ status, digest: layer.digest, total: layer.size, completed })
    }
    const done = this.uploadUrl(location, base, `push ${layer.digest}`)
    done.searchParams.set('digest', layer.digest)
    const put = await this.request(done.toString(), { method: 'PUT', signal }, `push ${layer.digest}`)
    if (put.status !== 201) throw new ModelServerError('registry_error', `push ${layer.digest}: ${await summariseRegistryAnswer(put)}`)
    await put.body?.cancel().catch(() => {})
  }
}

/** The body of `res` if it is at most `max` bytes, else undefined (the rest is not read). */
async function readBounded(res: Response, max: number): Promise<Buffer | undefined> {
  if (Number(res.headers.get('content-length') ?? 0) > max) {
    await res.body?.cancel()
    return undefined
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body?.getReader()
  for (;;) {
    const read = await reader?.read()
    if (!read || read.done) break
    size += read.value.length
    if (size > max) {
      await reader!.cancel().catch(() => undefined)
      return undefined
    }
    chunks.push(read.value)
  }
  return Buffer.concat(chunks)
}
