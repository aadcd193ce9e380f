import { createHash } from 'node:crypto'
import type { DataItemSigner } from './ArweaveSigner.js'
import { deepHash } from './deepHash.js'

export type Tag = { name: string; value: string }

/** ANS-104's limits on tags. */
const MAX_TAGS = 128
const MAX_TAG_BYTES = 4096
const ARWEAVE_SIGNATURE_TYPE = 1
const ARWEAVE_SIGNATURE_BYTES = 512

/** Avro's zig-zag variable-length long (tag counts and lengths are small, non-negative numbers). */
function avroLong(n: number): Buffer {
  const out: number[] = []
  let v = n * 2
  do {
    let byte = v % 128
    v = Math.floor(v / 128)
    if (v > 0) byte |= 0x80
    out.push(byte)
  } while (v > 0)
  return Buffer.from(out)
}

/** The tags as ANS-104 stores them: an Avro array of `{ name: bytes, value: bytes }` records (nothing when none). */
export function serializeTags(tags: Tag[]): Buffer {
  if (tags.length === 0) return Buffer.alloc(0)
  if (tags.length > MAX_TAGS) throw new Error(`a data item carries at most ${MAX_TAGS} tags`)
  const parts = [avroLong(tags.length)]
  for (const { name, value } of tags) {
    if (name.length === 0) throw new Error('a tag name is never empty')
    for (const text of [name, value]) {
      const bytes = Buffer.from(text, 'utf8')
      parts.push(avroLong(bytes.length), bytes)
    }
  }
  parts.push(avroLong(0))
  const raw = Buffer.concat(parts)
  if (raw.length > MAX_TAG_BYTES) throw new Error(`a data item's tags take at most ${MAX_TAG_BYTES} bytes (these: ${raw.length})`)
  return raw
}

export type SignedHeader = {
  /** base64url(SHA-256(signature)), 43 characters. */
  id: string
  /** Everything before the data: signature type, signature, owner, target, anchor and tags. */
  header: Buffer
}

/**
 * Signs an ANS-104 data item (no target, no anchor) whose data is `data`, read once, and returns its header; the
 * item is the header followed by the same bytes. The signature covers the deep hash of
 * `["dataitem", "1", type, owner, target, anchor, tags, data]`.
 */
export async function signDataItemHeader(signer: DataItemSigner, tags: Tag[], data: Uint8Array | AsyncIterable<Uint8Array>): Promise<SignedHeader> {
  if (signer.signatureType !== ARWEAVE_SIGNATURE_TYPE || signer.publicKey.length !== ARWEAVE_SIGNATURE_BYTES) throw new Error('only Arweave keys (signature type 1) sign data items here')
  const rawTags = serializeTags(tags)
  const text = (s: string) => Buffer.from(s)
  const message = await deepHash([text('dataitem'), text('1'), text(String(ARWEAVE_SIGNATURE_TYPE)), signer.publicKey, Buffer.alloc(0), Buffer.alloc(0), rawTags, data])
  const signature = Buffer.from(await signer.sign(message))
  if (signature.length !== ARWEAVE_SIGNATURE_BYTES) throw new Error(`an Arweave signature is ${ARWEAVE_SIGNATURE_BYTES} bytes, not ${signature.length}`)
  const type = Buffer.alloc(2)
  type.writeUInt16LE(ARWEAVE_SIGNATURE_TYPE)
  const counts = Buffer.alloc(16)
  counts.writeBigUInt64LE(BigInt(tags.length), 0)
  counts.writeBigUInt64LE(BigInt(rawTags.length), 8)
  // target and anchor: one presence byte each, 0 = absent
  const header = Buffer.concat([type, signature, signer.publicKey, Buffer.from([0, 0]), counts, rawTags])
  return { id: createHash('sha256').update(signature).digest('base64url'), header }
}
