import { Readable } from 'node:stream'
import type { DataItemSigner } from './dataItem/ArweaveSigner.js'
import { signDataItemHeader } from './dataItem/dataItemHeader.js'
import type { UpstreamClient } from './UpstreamClient.js'
import type { TreeUploader } from '../batch/TreeUploader.js'

/**
 * Stores the tree file through the prepaid storage upstream as an ANS-104 data item signed with the
 * service's Arweave key — the same path paid uploads take (src/storage). The file is small (a few hundred
 * bytes per receipt), so the item is built in memory.
 */
export function upstreamTreeUploader(upstream: Pick<UpstreamClient, 'uploadDataItem'>, signer: DataItemSigner): TreeUploader {
  return {
    async upload(data, tags) {
      const { id, header } = await signDataItemHeader(signer, tags, data)
      const raw = Buffer.concat([header, data])
      const result = await upstream.uploadDataItem(Readable.from([raw]), BigInt(raw.length))
      return { arTxId: result.id || id }
    },
  }
}
