import type { ModelServerContext } from '../ModelServerContext.js'
import { assertDigest, digestPattern } from '../store/BlobStore.js'
import type { HttpResult, RequestContext } from '../../shared/http/index.js'

export async function checkBlob(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const digest = req.params.digest ?? ''
  // A malformed digest names no blob: 404 (HEAD has no body to explain a 400).
  if (!digestPattern.test(digest)) return { status: 404 }
  return { status: (await ctx.store.blobs.has(digest)) ? 200 : 404 }
}

/** Streams the raw body to disk while hashing; 400 when the bytes do not hash to the path digest. */
export async function pushBlob(ctx: ModelServerContext, req: RequestContext): Promise<HttpResult> {
  const digest = req.params.digest ?? ''
  assertDigest(digest)
  if (await ctx.store.blobs.has(digest)) {
    req.raw.resume()
    return { status: 200 }
  }
  await ctx.store.blobs.putStream(req.raw, digest)
  return { status: 201 }
}
