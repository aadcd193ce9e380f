import { randomUUID } from 'node:crypto'
import { stat } from 'node:fs/promises'
import type { ModelServerContext } from '../ModelServerContext.js'
import { ModelServerError } from '../errors.js'
import { digestPattern, sha256Digest } from '../store/BlobStore.js'
import { DEFAULT_REGISTRY_HOST, type ModelName } from '../store/ModelName.js'
import { MANIFEST_MEDIA_TYPE, type Manifest } from '../store/ModelStore.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'

/**
 * The registry side of the OCI distribution protocol, so another instance can pull from / push to this one.
 * `/v2/<ns>/<name>/...` maps to this server's models on the default host (`<ns>/<name>:<tag>`, shown without
 * `library/`), so `127.0.0.1:PORT/library/x:latest` on a client is `x:latest` here.
 */
export class RegistryServer {
  private readonly uploads = new Map<string, { path: string; size: number; repo: string }>()

  constructor(private readonly ctx: ModelServerContext) {}

  private nameOf(req: RequestContext): ModelName {
    return { host: DEFAULT_REGISTRY_HOST, namespace: req.params.namespace!, model: req.params.repository!, tag: req.params.reference ?? 'latest' }
  }

  check(): HttpResult {
    return { status: 200, body: {}, headers: { 'docker-distribution-api-version': 'registry/2.0' } }
  }

  async getManifest(req: RequestContext): Promise<HttpResult> {
    const entry = await this.ctx.store.get(this.nameOf(req))
    if (!entry) return ociError(404, 'MANIFEST_UNKNOWN', 'manifest unknown')
    const bytes = await this.ctx.store.readManifestBytes(entry.name)
    return {
      status: 200,
      contentType: MANIFEST_MEDIA_TYPE,
      headers: { 'docker-content-digest': sha256Digest(bytes) },
      body: JSON.parse(bytes.toString('utf8')) as unknown,
    }
  }

  async headManifest(req: RequestContext): Promise<HttpResult> {
    const entry = await this.ctx.store.get(this.nameOf(req))
    if (!entry) return { status: 404 }
    return { status: 200, headers: { 'docker-content-digest': entry.digest, 'content-type': MANIFEST_MEDIA_TYPE } }
  }

  async putManifest(req: RequestContext): Promise<HttpResult> {
    const raw = (req.raw as { rawBody?: Buffer }).rawBody
    const manifest = req.body as Manifest
    if (!raw || !manifest || !Array.isArray(manifest.layers) || !manifest.config) {
      return ociError(400, 'MANIFEST_INVALID', 'manifest invalid')
    }
    for (const d of [manifest.config, ...manifest.layers]) {
      if (!digestPattern.test(d.digest) || !(await this.ctx.store.blobs.has(d.digest))) {
        return ociError(400, 'MANIFEST_BLOB_UNKNOWN', `blob unknown to registry: ${d.digest}`)
      }
    }
    const name = this.nameOf(req)
    await this.ctx.store.putRaw(name, raw)
    return {
      status: 201,
      headers: {
        location: `/v2/${name.namespace}/${name.model}/manifests/${name.tag}`,
        'docker-content-digest': sha256Digest(raw),
      },
    }
  }

  async getBlob(req: RequestContext): Promise<HttpResult> {
    const digest = req.params.digest!
    const size = await this.ctx.store.blobs.size(digest)
    if (size === undefined) return ociError(404, 'BLOB_UNKNOWN', 'blob unknown to registry')
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
    if (size === undefined) return { status: 404 }
    return { status: 200, headers: { 'content-length': size, 'docker-content-digest': digest } }
  }

  startUpload(req: RequestContext): HttpResult {
    const uuid = randomUUID()
    const repo = `${req.params.namespace}/${req.params.repository}`
    this.uploads.set(uuid, { path: this.ctx.store.blobs.tmpPath(), size: 0, repo })
    return {
      status: 202,
      headers: { location: `/v2/${repo}/blobs/uploads/${uuid}`, 'docker-upload-uuid': uuid, range: '0-0' },
    }
  }

  private session(req: RequestContext) {
    const s = this.uploads.get(req.params.uuid!)
    if (!s || s.repo !== `${req.params.namespace}/${req.params.repository}`) return undefined
    return s
  }

  async patchUpload(req: RequestContext): Promise<HttpResult> {
    const s = this.session(req)
    if (!s) return ociError(404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry')
    await this.ctx.store.blobs.writeTemp(req.raw, undefined, { path: s.path })
    s.size = (await stat(s.path)).size
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
    if (!s) return ociError(404, 'BLOB_UPLOAD_UNKNOWN', 'blob upload unknown to registry')
    const digest = String(req.query.digest ?? '')
    await this.ctx.store.blobs.writeTemp(req.raw, undefined, { path: s.path })
    this.uploads.delete(req.params.uuid!)
    try {
      await this.ctx.store.blobs.commit(s.path, digest)
    } catch (error) {
      if (error instanceof ModelServerError && error.status === 400) {
        return ociError(400, 'DIGEST_INVALID', 'provided digest did not match uploaded content')
      }
      throw error
    }
    return {
      status: 201,
      headers: { location: `/v2/${s.repo}/blobs/${digest}`, 'docker-content-digest': digest },
    }
  }
}

function ociError(status: number, code: string, message: string): HttpResult {
  return { status, body: { errors: [{ code, message }] } }
}
