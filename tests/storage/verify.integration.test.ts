/**
 * Verification (seed 4.7) end to end on the devnet peers: a paid, stored upload ends `verified` (SHA-256 of
 * the bytes read back and every tag, read through the Arweave gateway's GraphQL); a tampered item or a
 * mismatched tag ends `verify_failed`. The catalogue says each upload's `storage.upload.stored` and
 * `storage.upload.verified` once, as asyncapi/events.yaml declares them.
 */
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CatalogueEvent } from '../../src/catalogue/EventSink.js'
import { catalogueEventErrors } from '../support/catalogueEventSchemas.js'
import { waitFor } from '../support/waitFor.js'
import { evmEnv, type EvmPeers, payAndStoreOk, startEvmPeers, startAppGateway, type TestGateway, waitForVerification } from './harness.js'

let peers: EvmPeers
let gw: TestGateway
beforeAll(async () => {
  peers = await startEvmPeers()
  gw = await startAppGateway(evmEnv(peers), peers.dir)
  gw.worker.start()
}, 120_000)
afterAll(async () => {
  await gw?.close()
  await peers?.close()
})

/** The catalogue's events of `kind` about `uploadId`, each checked against its AsyncAPI payload schema. */
async function eventsOf(kind: 'storage.upload.stored' | 'storage.upload.verified', uploadId: string): Promise<CatalogueEvent[]> {
  const events = (await gw.services.catalogue.recent({ kind, limit: 200 })).filter((e) => e.payload.upload_id === uploadId)
  for (const e of events) expect(catalogueEventErrors(kind, e.payload)).toBeUndefined()
  return events
}

describe('background verification on the devnet', () => {
  it('a paid upload stored on local Base ends verified (sha256 and every tag checked)', async () => {
    const data = randomBytes(4000)
    const stored = await payAndStoreOk(gw.url, peers.base, 2, data)
    const row = await waitForVerification(gw.ledger, stored.arTxId)
    expect(row.verify_error).toBeNull()
    expect(row.status).toBe('verified')
    expect(row.sha256).toBe(createHash('sha256').update(data).digest('hex'))
    const view = await gw.service.getUpload(row.upload_id)
    expect(view).toMatchObject({ status: 'verified', ar_tx_id: stored.arTxId, error: null })
    const { deposit } = (await gw.ledger.getUpload(row.upload_id))!
    expect((await eventsOf('storage.upload.stored', row.upload_id)).map((e) => [e.severity, e.payload])).toEqual([
      ['info', { upload_id: row.upload_id, ar_tx_id: stored.arTxId, sha256: row.sha256, size_bytes: 4000, network: 'eip155:8453', payer: deposit.payer }],
    ])
    // the event follows the row's update (the catalogue's append after it): waited for, not read at once
    const verified = await waitFor('the verified event', async () => {
      const events = await eventsOf('storage.upload.verified', row.upload_id)
      return events.length > 0 ? events : undefined
    }, 10_000)
    expect(verified.map((e) => [e.severity, e.payload.ok, e.payload.reason])).toEqual([['info', true, undefined]])
    expect(verified[0]!.payload.confirmations).toBeGreaterThanOrEqual(1)
  })

  it('bytes tampered on the gateway end verify_failed with a sha256 mismatch', async () => {
    await gw.worker.stop()
    let arTxId: string
    try {
      arTxId = (await payAndStoreOk(gw.url, peers.base, 3, randomBytes(3000))).arTxId
      const item = join(peers.dir, 'weave', 'items', `${arTxId}.bin`)
      const bytes = readFileSync(item)
      bytes[bytes.length - 1] ^= 0xff
      writeFileSync(item, bytes)
    } finally {
      gw.worker.start()
    }
    const done = await waitForVerification(gw.ledger, arTxId)
    expect(done.status).toBe('verify_failed')
    expect(done.verify_error).toMatch(/^sha256 mismatch/)
    expect((await eventsOf('storage.upload.verified', done.upload_id)).map((e) => [e.severity, e.payload.ok, e.payload.reason])).toEqual([['warning', false, 'sha256_mismatch']])
  })

  it('a tag that differs from the recorded one ends verify_failed naming the tag', async () => {
    await gw.worker.stop()
    let arTxId: string
    try {
      arTxId = (await payAndStoreOk(gw.url, peers.base, 4, randomBytes(2000))).arTxId
      // the record says another App-Name than the item carries
      await gw.ledger.db.updateTable('storage_uploads').set({ app_name: 'someone-else' }).where('ar_tx_id', '=', arTxId).execute()
    } finally {
      gw.worker.start()
    }
    const done = await waitForVerification(gw.ledger, arTxId)
    expect(done.status).toBe('verify_failed')
    expect(done.verify_error).toBe('tag App-Name is "pay2store", expected "someone-else"')
    expect((await eventsOf('storage.upload.verified', done.upload_id)).map((e) => [e.severity, e.payload.ok, e.payload.reason])).toEqual([['warning', false, 'tag_mismatch']])
  })

  it('every response of the gateway matched openapi/gateway.yaml', () => {
    expect([...(gw?.validationErrors ?? [])]).toEqual([])
  })
})
