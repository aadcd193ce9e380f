/**
 * The Turbo-like upstream's upload service: an ANS-104 data item streamed to disk, verified for real
 * (arbundles FileDataItem.verify), charged in winc against the signer's normalised address and stored.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { publicKeyToAddress } from 'viem/accounts'
import { sendJson, sendText, type Request } from '../http.js'
import type { ItemStore, StoredItem } from './ItemStore.js'
import { textError } from './paymentRoutes.js'
import { uploadCost, type Pricing } from './pricing.js'

let arbundles: Promise<typeof import('@dha-team/arbundles')> | undefined
export const loadArbundles = () => (arbundles ??= import('@dha-team/arbundles'))

/** Normalised owner address of a data item signer, as Turbo keys balances. */
export function ownerAddress(signatureType: number, rawOwner: Buffer): string {
  if (signatureType === 3 || signatureType === 7) {
    // Ethereum (secp256k1, 65-byte uncompressed public key)
    return publicKeyToAddress(`0x${rawOwner.toString('hex')}`)
  }
  return createHash('sha256').update(rawOwner).digest('base64url')
}

export type UploadSettings = { store: ItemStore; pricing: Pricing; maxItemBytes: number; gatewayHost: string }

/** `POST /tx`: 200 with the receipt, 202 when the item exists, 400 when invalid, 402 when the balance is short. */
export function uploadRoute({ store, pricing, maxItemBytes, gatewayHost }: UploadSettings): (req: Request, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const ct = (req.headers['content-type'] ?? 'application/octet-stream').split(';')[0]?.trim().toLowerCase()
    if (ct !== 'application/octet-stream') throw textError(400, 'Invalid Content Type')
    const declared = req.headers['content-length']
    if (declared !== undefined && Number(declared) > maxItemBytes) {
      throw textError(400, `Data item is too large, this service only accepts data items up to ${maxItemBytes} bytes!`)
    }
    const ab = await loadArbundles()
    const tmp = join(store.incomingDir, `${Date.now()}-${randomBytes(6).toString('hex')}.part`)
    let size = 0
    try {
      req.raw.on('data', (c: Buffer) => {
        size += c.length
        if (size > maxItemBytes) req.raw.destroy(new Error('too large'))
      })
      await pipeline(req.raw, createWriteStream(tmp))
      if (size < 80) throw textError(400, 'Invalid Data Item')
      let valid = false
      try {
        valid = await ab.file.FileDataItem.verify(tmp)
      } catch {
        valid = false
      }
      if (!valid) throw textError(400, 'Invalid Data Item')
      const item = new ab.file.FileDataItem(tmp)
      const signatureType = await item.signatureType()
      const id = createHash('sha256').update(await item.rawSignature()).digest('base64url')
      const rawOwner = await item.rawOwner()
      const [rawSignature, rawTarget, rawAnchor] = [await item.rawSignature(), await item.rawTarget(), await item.rawAnchor()]
      const tags = await item.tags()
      const dataOffset = await item.dataStart()
      const owner = ownerAddress(signatureType, rawOwner)
      if (store.has(id)) {
        sendText(res, 202, 'Data Item Exists')
        return
      }
      const winc = uploadCost(pricing, size)
      if (!store.debit(owner, winc)) throw textError(402, 'Insufficient balance')
      const contentType = tags.find((t) => t.name.toLowerCase() === 'content-type')?.value ?? 'application/octet-stream'
      const m: StoredItem = {
        id,
        ownerAddress: owner,
        signatureType,
        tags,
        contentType,
        dataOffset,
        itemSize: size,
        dataSize: size - dataOffset,
        winc: winc.toString(),
        timestamp: Date.now(),
        deadlineHeight: store.height + 200,
        ownerKey: rawOwner.toString('base64url'),
        signature: rawSignature.toString('base64url'),
        target: rawTarget.toString('base64url'),
        anchor: rawAnchor.toString('base64url'),
      }
      store.put(tmp, m)
      sendJson(res, 200, {
        id,
        owner,
        dataCaches: [gatewayHost],
        fastFinalityIndexes: [gatewayHost],
        deadlineHeight: m.deadlineHeight,
        timestamp: m.timestamp,
        version: '0.2.0',
        winc: m.winc,
      })
    } finally {
      await rm(tmp, { force: true })
    }
  }
}
