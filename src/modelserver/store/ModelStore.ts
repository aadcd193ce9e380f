import type { BigIntStats } from 'node:fs'
import { mkdir, readdir, readFile, rm, rmdir, stat, writeFile, rename } from 'node:fs/promises'
import path from 'node:path'
import { Mutex } from 'async-mutex'
import { ModelServerError } from '../errors.js'
import { BlobPins } from './BlobPins.js'
import { BlobStore, digestPattern, sha256Digest } from './BlobStore.js'
import { KeyedMutex } from './KeyedMutex.js'
import { displayName, fullName, nameKey, parseModelName, type ModelName } from './ModelName.js'
import { existingSpelling } from './existingSpelling.js'

export const MANIFEST_MEDIA_TYPE = 'application/vnd.docker.distribution.manifest.v2+json'
export const CONFIG_MEDIA_TYPE = 'application/vnd.docker.container.image.v1+json'
export const LAYER = {
  model: 'application/vnd.ollama.image.model',
  template: 'application/vnd.ollama.image.template',
  system: 'application/vnd.ollama.image.system',
  params: 'application/vnd.ollama.image.params',
  license: 'application/vnd.ollama.image.license',
  messages: 'application/vnd.ollama.image.messages',
  projector: 'application/vnd.ollama.image.projector',
  adapter: 'application/vnd.ollama.image.adapter',
} as const

export type Descriptor = { mediaType: string; digest: string; size: number; from?: string }

/** A manifest descriptor as OCI defines it: a `sha256:` digest, a media type and the blob's size in bytes. */
export function isDescriptor(d: unknown): d is Descriptor {
  if (d === null || typeof d !== 'object') return false
  const { digest, mediaType, size } = d as Record<string, unknown>
  return typeof digest === 'string' && digestPattern.test(digest) && typeof mediaType === 'string' && Number.isSafeInteger(size) && (size as number) >= 0
}

export type Manifest = {
  schemaVersion: 2
  mediaType: string
  config: Descriptor
  layers: Descriptor[]
}

/** The config blob, in the shape Ollama writes (`model_format`, `model_family`...). */
export type ModelConfig = {
  model_format: string
  model_family: string
  model_families: string[]
  model_type: string
  file_type: string
  architecture: string
  os: string
  rootfs: { type: 'layers'; diff_ids: string[] }
  /** Ours: capabilities detected when the model was created (also re-detected by /api/show). */
  capabilities?: string[]
}

export type ManifestEntry = {
  name: ModelName
  manifest: Manifest
  /** The manifest file's bytes as read (what the registry side serves; `digest` is their sha256). */
  bytes: Buffer
  /** sha256 of the manifest bytes, `sha256:<hex>`. */
  digest: string
  modifiedAt: Date
  /** Sum of the config and layer sizes. */
  size: number
}

/** What the server needs of an installed model to run and describe it. */
export type ModelRecord = ManifestEntry & {
  config: ModelConfig | undefined
  modelPath: string | undefined
  modelDigest: string | undefined
  template: string | undefined
  system: string | undefined
  parameters: Record<string, unknown> | undefined
  license: string[]
  messages: Array<{ role: string; content: string }>
}

/**
 * The blobs one write pins until it is done (its manifest written, or failed). `pin` waits for a garbage
 * collection in progress, so a blob found present after `pin` stays present until `release`.
 */
export type BlobLease = {
  pin(digests: Iterable<string>): Promise<void>
  release(): void
}

/** What `resolve` reads from a manifest's blobs. */
type ResolvedLayers = Omit<ModelRecord, keyof ManifestEntry>

/**
 * Manifests in Ollama's layout: `<root>/manifests/<host>/<namespace>/<model>/<tag>`.
 *
 * Concurrent writes keep the store consistent: a manifest is written to a uniquely named temporary file and
 * renamed into place (readers see the old or the new file, never a torn one); the writes of one name (put, remove)
 * run one at a time (a mutex per normalised name); deleting a model removes only blobs that no manifest references
 * and no write in progress has pinned (`lease`), one collection at a time.
 *
 * Every generation request looks its model up, so reads are cached: a manifest entry while its file keeps its
 * identity (inode, size, mtime — one `stat` per lookup instead of reading and hashing it), and the layers read from
 * a manifest by its digest (blobs are content-addressed: the same digest always resolves to the same layers). Our
 * writes replace the file by rename (a new inode), so they are always seen; so is another process's in-place
 * rewrite, unless it keeps the size and lands within one tick of the file system's clock after our last read.
 */
export class ModelStore {
  readonly blobs: BlobStore
  readonly manifestsDir: string
  private readonly entries = new Map<string, { identity: string; entry: ManifestEntry }>()
  private readonly layers = new Map<string, ResolvedLayers>()
  private readonly nameLocks = new KeyedMutex()
  private readonly pins = new BlobPins()
  private readonly collector = new Mutex()

  constructor(readonly modelsDir: string) {
    this.blobs = new BlobStore(modelsDir)
    this.manifestsDir = path.join(modelsDir, 'manifests')
  }

  async init(): Promise<void> {
    await this.blobs.init()
    await mkdir(this.manifestsDir, { recursive: true })
  }

  manifestPath(name: ModelName): string {
    return path.join(this.manifestsDir, name.host, name.namespace, name.model, name.tag)
  }

  async list(): Promise<ManifestEntry[]> {
    const out: ManifestEntry[] = []
    for (const host of await dirs(this.manifestsDir)) {
      for (const namespace of await dirs(path.join(this.manifestsDir, host))) {
        for (const model of await dirs(path.join(this.manifestsDir, host, namespace))) {
          const modelDir = path.join(this.manifestsDir, host, namespace, model)
          for (const tag of await files(modelDir)) {
            const entry = await this.readEntry({ host, namespace, model, tag }).catch(() => undefined)
            if (entry) out.push(entry)
          }
        }
      }
    }
    return out.sort((a, b) => b.modifiedAt.getTime() - a.modifiedAt.getTime())
  }

  /** The installed model for a name (exact path first, then case-insensitively). */
  async get(input: string | ModelName): Promise<ManifestEntry | undefined> {
    const name = typeof input === 'string' ? parseModelName(input) : input
    const exact = await this.readEntry(name).catch(() => undefined)
    if (exact) return exact
    const key = nameKey(name)
    return (await this.list()).find((e) => nameKey(e.name) === key)
  }

  /** Writes a manifest for `name`, or for the installed name it equals but for case (every blob it references must be present). */
  async put(name: ModelName, manifest: Manifest): Promise<ManifestEntry> {
    return this.write(name, manifest, Buffer.from(JSON.stringify(manifest)))
  }

  /** Stores manifest bytes as received (pull, registry PUT) so its digest is preserved. */
  async putRaw(name: ModelName, bytes: Uint8Array): Promise<ManifestEntry> {
    let manifest: Manifest
    try {
      manifest = JSON.parse(Buffer.from(bytes).toString('utf8')) as Manifest
    } catch {
      throw new ModelServerError('invalid_manifest', 'manifest is not valid JSON')
    }
    if (!manifest || manifest.schemaVersion !== 2 || !manifest.config || !Array.isArray(manifest.layers)) {
      throw new ModelServerError('invalid_manifest', 'not a schema 2 manifest')
    }
    return this.write(name, manifest, Buffer.from(bytes))
  }

  /**
   * Writes under the name's lock: the blobs are pinned and checked, the bytes go to a temporary file of their own
   * and are renamed over the manifest. A concurrent delete of another tag may prune the (empty) directory between
   * `mkdir` and `rename`; the rename is then retried.
   */
  private async write(name: ModelName, manifest: Manifest, bytes: Buffer): Promise<ManifestEntry> {
    const digests = [manifest.config, ...manifest.layers].map((d) => d?.digest)
    if (digests.some((d) => typeof d !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(d))) {
      throw new ModelServerError('invalid_manifest', 'manifest references an invalid digest')
    }
    return this.withLease(async (lease) => {
      await lease.pin(digests as string[])
      for (const digest of digests as string[]) {
        // The callers pin and check their blobs first; reaching this is a bug, not a client mistake.
        if (!(await this.blobs.has(digest))) throw new ModelServerError('manifest_blob_missing', `model layer ${digest} is missing`)
      }
      return this.nameLocks.run(nameKey(name), async () => {
        // One model per name whatever its case, as Ollama (getExistingName): a write to `tiny` replaces an
        // installed `Tiny`, which keeps its spelling; a new name takes its parts' installed spellings.
        const target = (await this.get(name))?.name ?? existingSpelling(name, (await this.list()).map((e) => e.name))
        const file = this.manifestPath(target)
        const tmp = this.blobs.tmpPath()
        try {
          await writeFile(tmp, bytes)
          for (let attempt = 0; ; attempt++) {
            await mkdir(path.dirname(file), { recursive: true })
            try {
              await rename(tmp, file)
              break
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 8) throw error
            }
          }
        } finally {
          await rm(tmp, { force: true })
        }
        this.forget(file)
        return this.readEntry(target)
      })
    })
  }

  /**
   * Removes the manifest of `name` (looked up as `get` does) and then the blobs only it referenced. Returns the
   * removed entry, or undefined when no such model is installed (a concurrent delete may have won).
   */
  async remove(input: ModelName, beforeRemove?: (entry: ManifestEntry) => Promise<void>): Promise<ManifestEntry | undefined> {
    const removed = await this.nameLocks.run(nameKey(input), async () => {
      const entry = await this.get(input)
      if (!entry) return undefined
      await beforeRemove?.(entry)
      const file = this.manifestPath(entry.name)
      await rm(file, { force: true })
      this.forget(file)
      // Prune empty directories up to manifests/ (rmdir fails on a directory another tag still uses).
      let dir = path.dirname(file)
      while (dir.startsWith(this.manifestsDir) && dir !== this.manifestsDir) {
        try {
          await rmdir(dir)
        } catch {
          break
        }
        dir = path.dirname(dir)
      }
      return entry
    })
    if (removed) await this.pruneBlobs(removed.manifest)
    return removed
  }

  /**
   * Removes the blobs of `manifest` that no manifest references and no write in progress has pinned. The pins are
   * read before the manifests: a write that pinned earlier is skipped here, and one that pins later waits for this
   * collection to finish before it checks its blobs (`BlobLease.pin`), so it never relies on a blob removed here.
   */
  async pruneBlobs(manifest: Manifest): Promise<void> {
    await this.collector.runExclusive(async () => {
      const pinned = this.pins.snapshot()
      const used = new Set<string>()
      for (const e of await this.list()) for (const d of [e.manifest.config, ...e.manifest.layers]) used.add(d.digest)
      for (const d of [manifest.config, ...manifest.layers]) {
        if (!used.has(d.digest) && !pinned.has(d.digest) && !this.pins.has(d.digest)) await this.blobs.remove(d.digest)
      }
    })
  }

  /** A set of pins for one write; release it when the write is done. */
  lease(): BlobLease {
    const held: string[] = []
    let released = false
    return {
      pin: async (digests) => {
        if (released) throw new Error('lease already released')
        for (const d of digests) {
          this.pins.add(d)
          held.push(d)
        }
        await this.collector.waitForUnlock()
      },
      release: () => {
        if (released) return
        released = true
        for (const d of held) this.pins.remove(d)
      },
    }
  }

  async withLease<T>(fn: (lease: BlobLease) => Promise<T>): Promise<T> {
    const lease = this.lease()
    try {
      return await fn(lease)
    } finally {
      lease.release()
    }
  }

  /**
   * The installed model for a name with its blobs pinned on `lease` and present, or undefined when it is not
   * installed (also when a concurrent delete removed it between the lookup and the pins).
   */
  async getPinned(input: string | ModelName, lease: BlobLease): Promise<ManifestEntry | undefined> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const entry = await this.get(input)
      if (!entry) return undefined
      const digests = [entry.manifest.config, ...entry.manifest.layers].map((d) => d.digest)
      await lease.pin(digests)
      let present = true
      for (const d of digests) if (!(await this.blobs.has(d))) present = false
      if (present) return entry
    }
    return undefined
  }

  /** Names locked or waited for, and blobs pinned, right now (tests: nothing is left behind). */
  get activity(): { names: number; pins: number } {
    return { names: this.nameLocks.size, pins: this.pins.size }
  }

  private async readEntry(name: ModelName): Promise<ManifestEntry> {
    const file = this.manifestPath(name)
    const before = await stat(file, { bigint: true })
    const identity = identityOf(before)
    const cached = this.entries.get(file)
    if (cached?.identity === identity) return { ...cached.entry, name }
    const bytes = await readFile(file)
    const manifest = JSON.parse(bytes.toString('utf8')) as Manifest
    if (!manifest || !Array.isArray(manifest.layers) || !manifest.config) throw new Error('not a manifest')
    const size = [manifest.config, ...manifest.layers].reduce((n, d) => n + (d.size ?? 0), 0)
    const entry: ManifestEntry = { name, manifest, bytes, digest: sha256Digest(bytes), modifiedAt: new Date(Number(before.mtimeMs)), size }
    this.forget(file)
    // Kept only when the file did not change while it was read (a concurrent rename would leave a stale pair).
    const after = await stat(file, { bigint: true }).catch(() => undefined)
    if (after && identityOf(after) === identity) this.entries.set(file, { identity, entry })
    return entry
  }

  /** Drops the cached entry of a manifest file and the layers of its digest. */
  private forget(file: string): void {
    const cached = this.entries.get(file)
    if (!cached) return
    this.entries.delete(file)
    this.layers.delete(cached.entry.digest)
  }

  /** Reads the layers the server uses (model path, template, system, params, license, messages). */
  async resolve(entry: ManifestEntry): Promise<ModelRecord> {
    let layers = this.layers.get(entry.digest)
    if (!layers) {
      layers = await this.readLayers(entry.manifest)
      this.layers.set(entry.digest, layers)
    }
    // Copies, so a caller that edits its record cannot change the cached one.
    return { ...entry, ...structuredClone(layers) }
  }

  private async readLayers(manifest: Manifest): Promise<ResolvedLayers> {
    const text = async (d: Descriptor) => (await readFile(this.blobs.path(d.digest))).toString('utf8')
    let config: ModelConfig | undefined
    try {
      config = JSON.parse(await text(manifest.config)) as ModelConfig
    } catch {
      config = undefined
    }
    const record: ResolvedLayers = {
      config,
      modelPath: undefined,
      modelDigest: undefined,
      template: undefined,
      system: undefined,
      parameters: undefined,
      license: [],
      messages: [],
    }
    for (const layer of manifest.layers) {
      switch (layer.mediaType) {
        case LAYER.model:
          record.modelPath = this.blobs.path(layer.digest)
          record.modelDigest = layer.digest
          break
        case LAYER.template:
          record.template = await text(layer)
          break
        case LAYER.system:
          record.system = await text(layer)
          break
        case LAYER.params:
          record.parameters = JSON.parse(await text(layer)) as Record<string, unknown>
          break
        case LAYER.license:
          record.license.push(await text(layer))
          break
        case LAYER.messages:
          record.messages = JSON.parse(await text(layer)) as ModelRecord['messages']
          break
        default:
          break
      }
    }
    return record
  }

  /** Writes a config blob, pinned on `lease` until the manifest that uses it is written, and returns its descriptor. */
  async putConfig(config: ModelConfig, lease: BlobLease): Promise<Descriptor> {
    return this.putLayer(CONFIG_MEDIA_TYPE, JSON.stringify(config), lease)
  }

  /** Writes a small layer (JSON or text), pinned on `lease`, and returns its descriptor. */
  async putLayer(mediaType: string, content: string, lease: BlobLease): Promise<Descriptor> {
    const bytes = Buffer.from(content, 'utf8')
    await lease.pin([sha256Digest(bytes)])
    const { digest, size } = await this.blobs.putBytes(bytes)
    return { mediaType, digest, size }
  }
}

export function newManifest(config: Descriptor, layers: Descriptor[]): Manifest {
  return { schemaVersion: 2, mediaType: MANIFEST_MEDIA_TYPE, config, layers }
}

export { displayName, fullName }

/** What tells two versions of a manifest file apart without reading it. */
function identityOf(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.mtimeNs}`
}

async function dirs(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name)
  } catch {
    return []
  }
}

async function files(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir, { withFileTypes: true }))
      .filter((d) => d.isFile() && !d.name.includes('.tmp-'))
      .map((d) => d.name)
  } catch {
    return []
  }
}
