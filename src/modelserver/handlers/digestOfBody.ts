import { createHash } from 'node:crypto'
import type { Readable } from 'node:stream'
import { blobTooLarge } from '../store/BlobStore.js'

/**
 * The `sha256:<hex>` of a request body read to its end and kept nowhere (a refused upload still tells the client
 * what it sent, as Ollama's `digest mismatch` does); past `maxBytes` a 413, as a stored blob would be.
 */
export async function digestOfBody(body: Readable, maxBytes: number): Promise<string> {
  const hash = createHash('sha256')
  let size = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > maxBytes) throw blobTooLarge(maxBytes)
    hash.update(chunk)
  }
  return `sha256:${hash.digest('hex')}`
}
