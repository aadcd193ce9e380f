import { ModelServerError } from '../errors.js'

/** Ollama's check of an `/api/blobs/{digest}` path (manifest.BlobsPath): `sha256`, `:` or `-`, 64 hex digits of either case. */
const apiBlobDigestPattern = /^sha256[:-][0-9a-fA-F]{64}$/

/**
 * The store's digest (`sha256:` + lower-case hex) named by an `/api/blobs/{digest}` path, or a 400 as Ollama
 * answers a malformed one. `sha256-<hex>` is how blob files are named and Ollama finds a blob by it (a new blob's
 * upload still needs the `sha256:` form: `pushBlob`); hex digits are
 * lower-cased because `ABC…` and `abc…` are one SHA-256 (Ollama's upper-case path names a different file on a
 * case-sensitive disk, so it finds nothing there).
 */
export function parseApiBlobDigest(raw: string): string {
  if (!apiBlobDigestPattern.test(raw)) throw new ModelServerError('invalid_digest', `invalid digest format '${raw}'`)
  return `sha256:${raw.slice('sha256:'.length).toLowerCase()}`
}
