/**
 * Model registry peer: the OCI distribution API as registry.ollama.ai answers an anonymous client, over the
 * devnet's models (registryModels.ts), so `POST /api/pull {"model":"<host>/library/tiny-chat"}` on the model
 * server (or `ollama pull … --insecure`) pulls over the same protocol and client code as from Ollama's registry.
 *   GET /v2/                                   → 200 `{}` (`Docker-Distribution-Api-Version: registry/2.0`)
 *   GET|HEAD /v2/{ns}/{repo}/manifests/{ref}   → the manifest (a tag or its digest), `Docker-Content-Digest`
 *   GET|HEAD /v2/{ns}/{repo}/blobs/{digest}    → the blob (`Range: bytes=a-b` → 206), `Docker-Content-Digest`
 *   POST /v2/{ns}/{repo}/blobs/uploads/, PUT …/manifests/{ref}
 *                                              → 401 `UNAUTHORIZED` with a `WWW-Authenticate` challenge (pushing
 *                                                needs an account, as on registry.ollama.ai)
 * Errors are the distribution specification's `{"errors":[{"code","message","detail"}]}`: `MANIFEST_UNKNOWN`,
 * `BLOB_UNKNOWN`, `NAME_UNKNOWN` (404), `DIGEST_INVALID` (400), `UNSUPPORTED` (405, with `Allow`).
 * Unlike registry.ollama.ai, blobs are served here instead of through a redirect to a CDN: a model server follows
 * a registry's redirect only to public https addresses, which a loopback devnet cannot offer.
 */
import type { ServerResponse } from 'node:http'
import { HttpError, Router, sendBytes, sendJson, serve } from '../http.js'
import { type Blob, devnetModels, MANIFEST_MEDIA_TYPE, type RegistryModel } from './registryModels.js'

export interface RegistryOptions {
  port?: number
  host?: string
  models?: RegistryModel[]
}

export interface RegistryPeer {
  url: string
  /** `host:port`, as a model name and `MODELSERVER_REGISTRIES` write it. */
  host: string
  port: number
  /** Model names a model server pulls, `<host>/library/tiny-chat:latest`. */
  models: string[]
  close(): Promise<void>
}

type OciCode = 'MANIFEST_UNKNOWN' | 'BLOB_UNKNOWN' | 'NAME_UNKNOWN' | 'DIGEST_INVALID' | 'UNAUTHORIZED' | 'UNSUPPORTED' | 'RANGE_INVALID'

const ociError = (status: number, code: OciCode, message: string, detail: unknown = {}) => new HttpError(status, message, { errors: [{ code, message, detail }] })
const DIGEST = /^sha256:[0-9a-f]{64}$/
const API_VERSION = { 'docker-distribution-api-version': 'registry/2.0' }

export async function startRegistry(opts: RegistryOptions = {}): Promise<RegistryPeer> {
  const models = opts.models ?? devnetModels()
  const tags = new Map(models.map((m) => [`${m.repository}:${m.tag}`, m]))
  const byDigest = new Map(models.map((m) => [`${m.repository}@${m.digest}`, m]))
  const blobs = new Map<string, Blob>()
  for (const m of models) for (const b of m.blobs) blobs.set(`${m.repository}@${b.digest}`, b)
  const repositories = new Set(models.map((m) => m.repository))
  const repositoryOf = (params: Record<string, string>) => {
    const repository = `${params.ns}/${params.repo}`.toLowerCase()
    if (!repositories.has(repository)) throw ociError(404, 'NAME_UNKNOWN', 'repository name not known to registry', { name: repository })
    return repository
  }

  const router = new Router()
  router.get('/v2', (_req, res) => sendJson(res, 200, {}, API_VERSION))
  router.get('/v2/{ns}/{repo}/manifests/{ref}', (req, res) => {
    const repository = repositoryOf(req.params)
    const ref = req.params.ref!
    const model = DIGEST.test(ref) ? byDigest.get(`${repository}@${ref}`) : tags.get(`${repository}:${ref}`)
    if (!model) throw ociError(404, 'MANIFEST_UNKNOWN', 'manifest unknown', { name: repository, reference: ref })
    const headers = { ...API_VERSION, 'docker-content-digest': model.digest, etag: `"${model.digest}"` }
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'content-type': MANIFEST_MEDIA_TYPE, 'content-length': model.manifest.byteLength, ...headers })
      res.end()
      return
    }
    sendBytes(res, 200, model.manifest, MANIFEST_MEDIA_TYPE, headers)
  })
  router.get('/v2/{ns}/{repo}/blobs/{digest}', (req, res) => {
    const repository = repositoryOf(req.params)
    const digest = req.params.digest!
    if (!DIGEST.test(digest)) throw ociError(400, 'DIGEST_INVALID', 'provided digest did not match uploaded content', { digest })
    const found = blobs.get(`${repository}@${digest}`)
    if (!found) throw ociError(404, 'BLOB_UNKNOWN', 'blob unknown to registry', { digest })
    sendBlob(req.method, req.headers.range, found, res)
  })
  // Pushing needs an account on registry.ollama.ai: an anonymous client is asked to authenticate.
  const unauthorized = (res: ServerResponse) =>
    sendJson(res, 401, { errors: [{ code: 'UNAUTHORIZED', message: 'authentication required', detail: null }] }, {
      ...API_VERSION,
      'www-authenticate': 'Bearer realm="https://ollama.com/token",service="ollama.com",scope="repository:*:push"',
    })
  router.post('/v2/{ns}/{repo}/blobs/uploads', (_req, res) => unauthorized(res))
  router.on('PUT', '/v2/{ns}/{repo}/manifests/{ref}', (_req, res) => unauthorized(res))

  const listening = await serve(router, {
    port: opts.port,
    host: opts.host,
    name: 'registry',
    onError: (res, err) => {
      if (err.body) return sendJson(res, err.status, err.body, API_VERSION)
      if (err.status === 405) return sendJson(res, 405, { errors: [{ code: 'UNSUPPORTED', message: 'The operation is unsupported.', detail: null }] }, { ...API_VERSION, allow: 'GET, HEAD' })
      if (err.status === 404) return sendJson(res, 404, { errors: [{ code: 'NAME_UNKNOWN', message: 'repository name not known to registry', detail: null }] }, API_VERSION)
      sendJson(res, err.status, { errors: [{ code: 'UNKNOWN', message: err.message, detail: null }] }, API_VERSION)
    },
  })
  const host = `${opts.host ?? '127.0.0.1'}:${listening.port}`
  return {
    url: listening.url,
    host,
    port: listening.port,
    models: models.map((m) => `${host}/${m.repository}:${m.tag}`),
    close: () => listening.close(),
  }
}

/** The blob, whole or the one byte range asked for (clients resume an interrupted download with `Range`). */
function sendBlob(method: string, range: string | undefined, found: Blob, res: ServerResponse): void {
  const size = found.bytes.byteLength
  const headers = { ...API_VERSION, 'docker-content-digest': found.digest, 'accept-ranges': 'bytes', etag: `"${found.digest}"` }
  const asked = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null
  if (range && asked && (asked[1] || asked[2])) {
    const start = asked[1] ? Number(asked[1]) : Math.max(0, size - Number(asked[2]))
    const end = asked[1] && asked[2] ? Math.min(Number(asked[2]), size - 1) : size - 1
    if (start >= size || start > end) {
      res.writeHead(416, { ...headers, 'content-range': `bytes */${size}` })
      res.end()
      return
    }
    const part = found.bytes.subarray(start, end + 1)
    res.writeHead(206, { ...headers, 'content-type': 'application/octet-stream', 'content-length': part.byteLength, 'content-range': `bytes ${start}-${end}/${size}` })
    res.end(method === 'HEAD' ? undefined : part)
    return
  }
  if (method === 'HEAD') {
    res.writeHead(200, { ...headers, 'content-type': 'application/octet-stream', 'content-length': size })
    res.end()
    return
  }
  sendBytes(res, 200, found.bytes, 'application/octet-stream', headers)
}
