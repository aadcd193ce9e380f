import { createHash } from 'node:crypto'

/** One part of a deep hash: bytes, a stream of bytes (hashed as it is read), or a list of parts. */
export type DeepHashPart = Uint8Array | AsyncIterable<Uint8Array> | DeepHashPart[]

const sha384 = (...parts: Uint8Array[]) => {
  const hash = createHash('sha384')
  for (const part of parts) hash.update(part)
  return hash.digest()
}
const tag = (kind: 'blob' | 'list', length: number) => sha384(Buffer.from(`${kind}${length}`))

/**
 * Arweave's deep hash (SHA-384), what an ANS-104 data item's signature covers. A blob hashes its tag (`blob` and its
 * length) beside its bytes, so a stream is hashed in one pass and its length taken at the end; a list folds the
 * hashes of its parts into the hash of its tag (`list` and its count).
 */
export async function deepHash(part: DeepHashPart): Promise<Buffer> {
  if (part instanceof Uint8Array) return sha384(tag('blob', part.byteLength), sha384(part))
  if (Array.isArray(part)) {
    let acc = tag('list', part.length)
    for (const child of part) acc = sha384(acc, await deepHash(child))
    return acc
  }
  const hash = createHash('sha384')
  let length = 0
  for await (const chunk of part) {
    length += chunk.byteLength
    hash.update(chunk)
  }
  return sha384(tag('blob', length), hash.digest())
}
