/**
 * `StorageService.getUpload` — the `UploadStatus` body of `GET /store/uploads/{upload_id}` — through the
 * ledger's states: `stored_at` once stored, `attestation` once the verifier attested (StorageAttest).
 * Bodies are checked against the document's schema (generated zod).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { zUploadStatus } from '../../generated/gateway/zod.gen.js'
import { type DatabaseHandle, createDatabase } from '../db/createDatabase.js'
import { readX402Config } from '../x402/config.js'
import { readStorageConfig } from './config.js'
import { UploadNotFoundError } from './errors.js'
import { newDepositId, newUploadId } from './ids.js'
import { Ledger } from './Ledger.js'
import { StorageService } from './StorageService.js'

let h: DatabaseHandle
let ledger: Ledger
let service: StorageService

beforeAll(async () => {
  h = await createDatabase({ url: ':memory:' })
  ledger = new Ledger(h.db)
  service = new StorageService({ storage: readStorageConfig({}), x402: readX402Config({}), ledger })
})
afterAll(async () => h?.close())

async function settledUpload(): Promise<string> {
  const depositId = newDepositId()
  const uploadId = newUploadId()
  const txHash = `0x${randomBytes(32).toString('hex')}`
  const settled = { txHash, settlement: { success: true, transaction: txHash, network: 'eip155:8453', payer: `0x${'cc'.repeat(20)}` } }
  const claimed = await ledger.claimWithUpload(
    {
      depositId, payer: `0x${'cc'.repeat(20)}`, nonce: uploadId, payTo: `0x${'52'.repeat(20)}`, network: 'eip155:8453', asset: `0x${'83'.repeat(20)}`,
      scheme: 'exact', amountAtomic: 5012n, priceAtomic: 5012n, priceUsd: '0.005012', resourceUrl: 'http://x/store', paymentPayload: {}, settled,
    },
    { uploadId, depositId, sha256: 'ab'.repeat(32), mimeType: 'application/octet-stream', sizeBytes: 2048n, appName: 'a', payerTag: '', spoolPath: '/tmp/x' },
    'uploading',
  )
  expect(claimed).toBe(true)
  return uploadId
}

describe('StorageService.getUpload', () => {
  it('reports stored_at once stored and the attestation once the verifier recorded it', async () => {
    const uploadId = await settledUpload()
    const uploading = await service.getUpload(uploadId)
    expect(uploading).toMatchObject({ status: 'uploading', ar_tx_id: null, stored_at: null, attestation: null })
    zUploadStatus.parse(uploading)

    const before = Math.floor(Date.now() / 1000)
    await ledger.markStored(uploadId, 'Q5Ugu0gC3vn-8z0W1JHRJKRrBxnBD0wpr3v9aLQXk6M', '1853293', 0)
    await ledger.recordVerification(uploadId, true, null)
    const verified = await service.getUpload(uploadId)
    expect(verified).toMatchObject({ status: 'verified', attestation: null })
    expect(verified.stored_at).toBeGreaterThanOrEqual(before)
    zUploadStatus.parse(verified)

    const attestation = { txHash: `0x${'5c'.repeat(32)}`, chainId: 8453, contract: '0x5FbDB2315678afecb367f032d93F642f64180aa3' }
    await ledger.recordAttestation(uploadId, attestation)
    const attested = await service.getUpload(uploadId)
    expect(attested.attestation).toEqual({ tx_hash: attestation.txHash, chain_id: 8453, contract: attestation.contract })
    expect(attested.stored_at).toBe(verified.stored_at)
    zUploadStatus.parse(attested)
  })

  it('a row stored before stored_at was kept reports created_at; one attested before its chain was kept shows no attestation', async () => {
    const uploadId = await settledUpload()
    await ledger.markStored(uploadId, randomBytes(32).toString('base64url').slice(0, 43), null, 0)
    await h.db.updateTable('storage_uploads').set({ stored_at: null, status: 'verified', attest_tx_hash: `0x${'5c'.repeat(32)}` }).where('upload_id', '=', uploadId).execute()
    const view = await service.getUpload(uploadId)
    expect(view).toMatchObject({ stored_at: view.created_at, attestation: null })
    zUploadStatus.parse(view)
  })

  it('404s an unknown id', async () => {
    await expect(service.getUpload(newUploadId())).rejects.toBeInstanceOf(UploadNotFoundError)
  })
})
