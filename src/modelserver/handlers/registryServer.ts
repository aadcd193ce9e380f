import { randomUUID } from 'node:crypto'
import type { ModelServerContext } from '../ModelServerContext.js'
import { boundedBody } from './boundedBody.js'
import { ModelServerError } from '../errors.js'
import { ociError } from '../registry/ociErrors.js'
import { blobTooLarge, sha256Digest } from '../store/BlobStore.js'
import { DEFAULT_REGISTRY_HOST, type ModelName } from '../store/ModelName.js'
import { layerProblem } from '../store/checkLayers.js'
import { isDescriptor, MANIFEST_MEDIA_TYPE, type Manifest } from '../store/ModelStore.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'

/** An upload session: the temporary file its PATCHes append to. */
type UploadSession = { path: string; size: number; repo: string; touched: number }

/** Sessions idle this long are discarded with their temporary file (a client that never finished). */
const UPLOAD_IDLE_MS = 60 * 60_000

/**
 * The registry side of the OCI distribution protocol, so another instance can pull from / push to this one.
 * `/v2/<ns>/<name>/...` maps to this server's models on the default host (`<ns>/<name>:<tag>`, shown without
 * `library/`), so `127.0.0.1:PORT/library/x:latest` on a client is `x:latest` here. Errors are the distribution
 * specification's `{"errors":[{"code","message","detail"}]}`.
 */
export class RegistryServer {
  private readonly uploads = new Map<string, UploadSession>()
  private readonly sweeper: NodeJS.Timeout

  constructor(private readonly ctx: ModelServerContext) {
    this.sweeper = setInterval(() => void this.expireUploads(UPLOAD_IDLE_MS), 60_000)
    this.sweeper.unref()
  }

  private nameOf(req: RequestContext): ModelName {
    return { host: DEFAULT_REGISTRY_HOST, namespace: req.params.namespace!, model: req.params.repository!, tag: req.params.reference ?? 'latest' }
  }

  private repoOf(req: RequestContext): string {
    return `${req.params.namespace}/${req.params.repository}`
  }

  check(): HttpResult {
    return { status: 200, body: {}, headers: { 'docker-distribution-api-version': 'registry/2.0' } }
  }

  async getManifest(req: RequestContext): Promise<HttpResult> {
    const entry = await this.ctx.store.get(this.nameOf(req))
    if (!entry) return ociError('MANIFEST_UNKNOWN', { name: this.repoOf(req), reference: req.params.reference })
    return {
      status: 200,
      contentType: MANIFEST_MEDIA_TYPE,
      headers: { 'docker-content-digest': entry.digest },
      body: JSON.parse(entry.bytes.toString('utf8')) as unknown,
    }
  }

  async headManifest(req: RequestContext): Promise<HttpResult> {
    const entry = await this.ctx.store.get(this.nameOf(req))
    // the GET's refusal (a HEAD answer carries no body)
    if (!entry) return ociError('MANIFEST_UNKNOWN', { name: this.repoOf(req), reference: req.params.reference })
    return { status: 200, headers: { 'docker-content-digest': entry.digest, 'content-type': MANIFEST_MEDIA_TYPE } }
  }

  /**
   * Stores a manifest whose blobs are all present and make a usable model (`layerProblem`); they stay pinned from the
   * check until the manifest is written.
   */
  async putManifest(req: RequestContext): Promise<HttpResult> {
    const raw = (req.raw as { rawBody?: Buffer }).rawBody
    const manifest = req.body as Manifest
    if (!raw || !manifest || !Array.isArray(manifest.layers) || !manifest.config) {
      return ociError('MANIFEST_INVALID', { reason: 'not a schema 2 manifest with config and layers' })
    }
    const name = this.nameOf(req)
    const descriptors: unknown[] = [manifest.config, ...manifest.layers]
    // every descriptor an object with a digest, a media type and a whole size (a `null` layer or a size "x" would be
    // stored, and break every later listing or load of the model)
    const index = descriptors.findIndex((d) => !isDescriptor(d))
    if (index >= 0) return ociError('MANIFEST_INVALID', { reason: 'a descriptor needs a sha256 digest, a mediaType and a whole size', index })
    const described = descriptors as Manifest['layers']
    return this.ctx.store.withLease(async (lease) => {
      await lease.pin(described.map((d) => d.digest))
      for (const d of described) {
        const size = await this.ctx.store.blobs.size(d.digest)
        if (size === undefined) return ociError('MANIFEST_BLOB_UNKNOWN', { digest: d.digest })
        if (size !== d.size) return ociError('MANIFEST_INVALID', { reason: 'a descriptor size is not its blob size', digest: d.digest, size: d.size, blob_size: size })
      }
      const problem = await layerProblem(manifest, this.ctx.store.blobs, (path) => this.ctx.engine.inspect(path))
      if (problem) return ociError('MANIFEST_INVALID', problem)
      await this.ctx.store.putRaw(name, raw)
      return {
        status: 201,
        headers: {
          location: `/v2/${name.namespace}/${name.model}/manifests/${name.tag}`,
          'docker-content-digest': sha256Digest(raw),
        },
      }
    })
  }

  async getBlob(req: RequestContext): Promise<HttpResult> {
    const digest = req.params.digest!
    const size = await this.ctx.store.blobs.size(digest)
    if (size === undefined) return ociError('BLOB_UNKNOWN', { digest })
    return {
      status: 200,
      contentType: 'application/octet-stream',
      headers: { 'content-length': size, 'docker-content-digest': digest },
      stream: this.ctx.store.blobs.read(digest),
    }
  }

  async headBlob(req: RequestContext): Promise<HttpResult> {
    const digest = req.params.digest!
    const size = await this.ctx.store.blobs.size(digest)
    if (size === undefined) return ociError('BLOB_UNKNOWN', { digest })
    return { status: 200, headers: { 'content-length': size, 'docker-content-digest': digest } }
  }

  startUpload(req: RequestContext): HttpResult {
    // Each session holds a temporary file for up to an hour: their number is bounded.
    if (this.uploads.size >= this.ctx.config.maxUploadSessions) {
      throw new ModelServerError('too_many_uploads', `${this.ctx.config.maxUploadSessions} upload sessions are open; finish or wait for one`)
    }
    const uuid = randomUUID()
    const repo = this.repoOf(req)
    this.uploads.set(uuid, { path: this.ctx.store.blobs.tmpPath(), size: 0, repo, touched: Date.now() })
    return {
      status: 202,
      headers: { location: `/v2/${repo}/blobs/uploads/${uuid}`, 'docker-upload-uuid': uuid, range: '0-0' },
    }
  }

  private session(req: RequestContext): UploadSession | undefined {
    const s = this.uploads.get(req.params.uuid!)
    if (!s || s.repo !== this.repoOf(req)) return undefined
    s.touched = Date.now()
    return s
  }

  async patchUpload(req: RequestContext): Promise<HttpResult> {
    const s = this.session(req)
    if (!s) return ociError('BLOB_UPLOAD_UNKNOWN', { uuid: req.params.uuid })
    s.size += await this.append(req, s)
    return {
      status: 202,
      headers: {
        location: `/v2/${s.repo}/blobs/uploads/${req.params.uuid}`,
        range: `0-${Math.max(0, s.size - 1)}`,
        'docker-upload-uuid': req.params.uuid!,
      },
    }
  }

  async completeUpload(req: RequestContext): Promise<HttpResult> {
    const s = this.session(req)
    if (!s) return ociError('BLOB_UPLOAD_UNKNOWN', { uuid: req.params.uuid })
    const digest = String(req.query.digest ?? '')
    await this.append(req, s)
    this.uploads.delete(req.params.uuid!)
    try {
      await this.ctx.store.blobs.commit(s.path, digest)
    } catch (error) {
      if (error instanceof ModelServerError && error.status === 400) return ociError('DIGEST_INVALID', { digest })
      throw error
    }
    return {
      status: 201,
      headers: { location: `/v2/${s.repo}/blobs/${digest}`, 'docker-content-digest': digest },
    }
  }

  /**
   * Appends the request body to the session's file, the whole blob bounded by `MODELSERVER_MAX_BLOB_BYTES`; a
   * failed append (client gone, blob too large) ends the session and its file.
   */
  private async append(req: RequestContext, s: UploadSession): Promise<number> {
    const { body, refuse } = boundedBody(req.raw)
    try {
      const room = this.ctx.config.maxBlobBytes - s.size
      if (Number(req.headers['content-length'] ?? 0) > room) throw blobTooLarge(this.ctx.config.maxBlobBytes)
      return (await this.ctx.store.blobs.writeTemp(body, undefined, { path: s.path }, room)).size
    } catch (error) {
      refuse()
      this.uploads.delete(req.params.uuid!)
      await this.ctx.store.blobs.discard(s.path)
      throw error
    }
  }

  /** Discards sessions idle for `idleMs` (every session with 0), with their temporary files. */
  async expireUploads(idleMs: number): Promise<void> {
    const now = Date.now()
    for (const [uuid, s] of this.uploads) {
      if (now - s.touched < idleMs) continue
      this.uploads.delete(uuid)
      await this.ctx.store.blobs.discard(s.path)
    }
  }

  async dispose(): Promise<void> {
    clearInterval(this.sweeper)
    await this.expireUploads(0)
  }
}
