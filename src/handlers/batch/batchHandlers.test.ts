/**
 * `GET /store/receipts/{ar_tx_id}` behind the real OpenAPI router (openapi/gateway.yaml, response
 * validation on): the served body must be the document's `Receipt`, and its proof must verify.
 */
import { once } from 'node:events'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import express from 'express'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ledgerReceiptSource } from '../../batch/ledgerReceiptSource.js'
import { LEAF_ENCODING, arTxIdToBytes32 } from '../../batch/receiptLeaf.js'
import { runBatch } from '../../batch/runBatch.js'
import { FakeCommitter, FakeUploader, insertLedgerRow, randomArTxId } from '../../../tests/support/batchFakes.js'
import { type DatabaseHandle, createDatabase } from '../../db/createDatabase.js'
import { type ResponseValidationReport, createOpenApiRouter, loadOpenApiDocument } from '../../shared/http/index.js'
import { createCapturingLogger } from '../../../tests/support/createCapturingLogger.js'
import { gatewayCatalogue } from '../plugins.js'
import type { CoreServices, Handler, HandlerContext, Services } from '../types.js'
import { batchErrorRows } from './errorRows.js'
import { batchHandlers, initBatch } from './index.js'

const documentPath = fileURLToPath(new URL('../../../openapi/gateway.yaml', import.meta.url))
const PAYER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8'

let h: DatabaseHandle
let url: string
let close: () => Promise<void>
const validationErrors: ResponseValidationReport[] = []

beforeAll(async () => {
  h = await createDatabase({ url: ':memory:' })
  const { logger } = createCapturingLogger({ name: 'batch-test' })
  const core = {
    config: { dataDir: '/nonexistent' },
    db: h.db,
    dialect: 'sqlite',
    logger,
    now: () => 1_800_000_000,
    catalogue: { emit: async () => ({}) },
    databaseUrl: ':memory:',
    env: {},
  } as unknown as CoreServices
  const setup = await initBatch(core)
  const services = { ...core, ...setup.services } as unknown as Services
  const router = createOpenApiRouter({
    document: loadOpenApiDocument(documentPath),
    handlers: Object.fromEntries(
      Object.entries(batchHandlers).map(([id, fn]) => [id, (ctx: unknown) => (fn as Handler)({ ...(ctx as HandlerContext), services })]),
    ),
    responseValidation: 'error',
    // thrown errors become responses through the error catalogue, as in the app
    mapError: (error) => gatewayCatalogue.toResult(error) ?? { status: 500, body: { error: 'internal_error', message: 'internal error' } },
    onResponseValidationError: (r) => validationErrors.push(r),
    logger,
  })
  const app = express()
  app.use(router.handler)
  const server = app.listen(0, '127.0.0.1')
  await once(server, 'listening')
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  close = async () => {
    server.close()
    await setup.close?.()
    await h.close()
  }
})

afterAll(async () => {
  await close?.()
})

const get = async (id: string) => {
  const res = await fetch(`${url}/store/receipts/${id}`)
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, cache: res.headers.get('cache-control') }
}

describe('GET /store/receipts/{ar_tx_id}', () => {
  it('serves pending, then committed receipts in the document shape; 404 unknown; 400 malformed', async () => {
    const id = await insertLedgerRow(h.db, { payer: PAYER, amountAtomic: 5012n, sizeBytes: 2048, createdAt: 1_795_348_805 })
    const other = await insertLedgerRow(h.db, { payer: PAYER, network: 'eip155:1', createdAt: 1_795_348_806 })

    const pending = await get(id)
    expect(pending).toMatchObject({ status: 200, cache: 'no-store' })
    expect(pending.body).toMatchObject({
      ar_tx_id: id,
      ar_tx_id_bytes32: arTxIdToBytes32(id),
      payer: PAYER,
      network: 'eip155:8453',
      currency: 1,
      size_bytes: 2048,
      paid_atomics: '5012',
      stored_at: 1_795_348_805,
      chain_id: null,
      contract: null,
      commit_tx: null,
      batch: null,
    })

    const committer = new FakeCommitter()
    await runBatch({ db: h.db, source: ledgerReceiptSource(h.db), uploader: new FakeUploader(), committer })
    const committed = await get(id)
    expect(committed.status).toBe(200)
    // where to call attestLeaf: the committer's chain and contract, and the transaction that committed the root
    expect(committed.body).toMatchObject({ chain_id: committer.chainId, contract: committer.contract, commit_tx: committer.sent[0]!.hash })
    const batch = committed.body.batch as { epoch: number; root: string; leaf_count: number; leaf: string; proof: string[] }
    expect(batch).toMatchObject({ epoch: 1, leaf_count: 2 })
    const b = committed.body
    const tuple = [b.payer, b.ar_tx_id_bytes32, String(b.size_bytes), b.paid_atomics, b.currency]
    expect(StandardMerkleTree.verify(batch.root, [...LEAF_ENCODING], tuple, batch.proof)).toBe(true)
    expect((await get(other)).body).toMatchObject({ currency: 2, batch: { epoch: 1, root: batch.root } })

    expect(await get(randomArTxId())).toMatchObject({ status: 404, body: { error: 'receipt_not_found' } })
    expect((await get('not-a-storage-id')).status).toBe(400)
    expect(validationErrors).toEqual([])
  })

  it('maps its error codes for the catalogue', () => {
    expect(batchErrorRows.receipt_not_found).toEqual({ status: 404 })
  })
})
