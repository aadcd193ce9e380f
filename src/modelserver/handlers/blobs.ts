import type { ModelServerContext } from '../ModelServerContext.js'
import { ModelServerError } from '../errors.js'
import { boundedBody } from './boundedBody.js'
import { blobTooLarge } from '../store/BlobStore.js'
import { parseApiBlobDigest } from './apiBlobDigest.js'
import { digestOfBody } from './digestOfBody.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'

export async function checkBlob(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  // A malformed digest is a 400 as in Ollama (HEAD drops the body; the status says it).
  const digest = parseApiBlobDigest(req.params.digest ?? '')
  if (!(await ctx.store.blobs.has(digest))) throw new ModelServerError('blob_not_found', `blob ${digest} not found`)
  return { status: 200 }
}

/**
 * Streams the raw body to disk while hashing; 400 when the bytes do not hash to the path digest, 413 past
 * `MODELSERVER_MAX_BLOB_BYTES` (told by Content-Length before a byte is written, or counted as it streams).
 * A new blob is only taken under its digest exactly as Ollama computes it, `sha256:` and lower-case hex: Ollama
 * compares the path as written with that, so `sha256-<hex>` or upper-case digits are its `digest mismatch` 400
 * whatever the bytes (here nothing is kept on that 400; the client learns the digest to send them under).
 */
export async function pushBlob(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const written = req.params.digest ?? ''
  const digest = parseApiBlobDigest(written)
  const max = ctx.config.maxBlobBytes
  if (Number(req.headers['content-length'] ?? 0) > max) {
    boundedBody(req.raw).refuse()
    throw blobTooLarge(max)
  }
  if (await ctx.store.blobs.has(digest)) {
    req.raw.resume()
    return { status: 200 }
  }
  const { body, refuse } = boundedBody(req.raw)
  try {
    if (written !== digest) {
      const actual = await digestOfBody(body, max)
      throw new ModelServerError('digest_mismatch', `digest mismatch, expected "${written}", got "${actual}"`)
    }
    await ctx.store.blobs.putStream(body, digest, undefined, max)
  } catch (error) {
    refuse()
    throw error
  }
  return { status: 201 }
}
