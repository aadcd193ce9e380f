import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { PassThrough, type Readable } from 'node:stream'
import { ArweaveSigner, type DataItemSigner } from './dataItem/ArweaveSigner.js'
import { signDataItemHeader, type Tag } from './dataItem/dataItemHeader.js'

export type { Tag }

export type SignedDataItem = {
  /** base64url(SHA-256(signature)), 43 characters. */
  id: string
  header: Buffer
  /** Total length: header + data. */
  length: bigint
  /** A fresh stream of the whole data item (header, then the file). */
  open: () => Readable
}

export async function loadArweaveSigner(jwkPath: string): Promise<DataItemSigner> {
  const jwk = JSON.parse(await readFile(jwkPath, 'utf8'))
  return new ArweaveSigner(jwk)
}

/**
 * Signs an ANS-104 data item over a file without loading it: the deep hash reads the file as a stream
 * (first pass), the signature goes into the header, and the upload streams header + file (second pass).
 * Memory is bounded by stream buffers.
 */
export async function signDataItemFromFile(signer: DataItemSigner, path: string, sizeBytes: bigint, tags: Tag[]): Promise<SignedDataItem> {
  const { id, header: raw } = await signDataItemHeader(signer, tags, createReadStream(path, { highWaterMark: 1 << 16 }))
  return {
    id,
    header: raw,
    length: BigInt(raw.length) + sizeBytes,
    open: () => {
      const out = new PassThrough({ highWaterMark: 1 << 16 })
      out.write(raw)
      const file = createReadStream(path, { highWaterMark: 1 << 16 })
      file.on('error', (e) => out.destroy(e))
      file.pipe(out)
      return out
    },
  }
}

/** The tags of seed 4.6 step 5. */
export function storageTags(appName: string, sha256Hex: string, payer: string): Tag[] {
  return [
    { name: 'App-Name', value: appName },
    { name: 'App-Version', value: '1.0' },
    { name: 'SVC-SHA256', value: sha256Hex },
    { name: 'SVC-Service', value: 'pay2store' },
    { name: 'SVC-Payer', value: payer },
  ]
}
