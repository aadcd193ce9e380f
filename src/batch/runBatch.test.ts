import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import type { Hex } from 'viem'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type DatabaseHandle, createDatabase } from '../db/createDatabase.js'
import { ReceiptNotFoundError } from './errors.js'
import { getReceiptProof } from './getReceiptProof.js'
import { ledgerReceiptSource } from './ledgerReceiptSource.js'
import { LEAF_ENCODING, type LeafTuple, arTxIdToBytes32 } from './receiptLeaf.js'
import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import { type BatchLogger, runBatch } from './runBatch.js'
import { FakeCommitter, FakeUploader, dyingCommitter, insertLedgerRow, randomArTxId } from '../../tests/support/batchFakes.js'
import { type TestDatabase, createTestDatabase, dialects } from '../../tests/support/testDatabase.js'
import { waitFor } from '../../tests/support/waitFor.js'
import { catalogueEventErrors } from '../../tests/support/catalogueEventSchemas.js'

const PAYERS = [
  '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
  '0x90F79bf6EB2c4f870365E785982E1f101E93b906',
] as const

describe('receipt batch (ledger → tree → tree file → commit → proofs)', () => {
  let h: DatabaseHandle
  let uploader: FakeUploader
  let committer: FakeCommitter
  beforeEach(async () => {
    h = await createDatabase({ url: ':memory:' })
    uploader = new FakeUploader()
    committer = new FakeCommitter()
  })
  afterEach(async () => {
    await h.close()
  })
  const run = (over: Partial<Parameters<typeof runBatch>[0]> = {}) =>
    runBatch({ db: h.db, source: ledgerReceiptSource(h.db), uploader, committer, now: () => 1_800_000_000, ...over })

  it('batches settled, stored uploads and records a proof per receipt that verifies against the root', async () => {
    const ids = [
      await insertLedgerRow(h.db, { payer: PAYERS[0], amountAtomic: 5000n, sizeBytes: 10 }),
      await insertLedgerRow(h.db, { payer: PAYERS[1], network: 'eip155:1', amountAtomic: 7000n, sizeBytes: 20, uploadStatus: 'verified' }),
      await insertLedgerRow(h.db, { payer: PAYERS[2], amountAtomic: 12_345_678_901_234_567_890n, sizeBytes: 30 }),
    ]
    // not receipts: queued upload, unsettled deposit, failed verification
    await insertLedgerRow(h.db, { payer: PAYERS[0], uploadStatus: 'queued' })
    await insertLedgerRow(h.db, { payer: PAYERS[0], depositStatus: 'claimed' })
    const failed = await insertLedgerRow(h.db, { payer: PAYERS[0], uploadStatus: 'verify_failed' })

    const result = await run()
    expect(result.created).toHaveLength(1)
    const batch = result.created[0]!
    expect(batch).toMatchObject({ status: 'committed', epoch: 1, leafCount: 3, chainId: 31337 })
    expect(committer.sent).toHaveLength(1)
    expect(committer.sent[0]).toMatchObject({ root: batch.root, leafCount: 3, arweaveTx: arTxIdToBytes32(batch.treeArTxId!) })

    // the stored tree file is the library's dump, with the committed root
    const file = uploader.files[0]!
    expect(file.arTxId).toBe(batch.treeArTxId)
    const tree = StandardMerkleTree.load<LeafTuple>(JSON.parse(new TextDecoder().decode(file.data)))
    expect(tree.root).toBe(batch.root)
    expect(file.tags).toContainEqual({ name: 'SVC-Batch-Root', value: batch.root })
    expect(file.tags).toContainEqual({ name: 'Content-Type', value: 'application/json' })

    for (const [i, id] of ids.entries()) {
      const view = await getReceiptProof(h.db, ledgerReceiptSource(h.db), id)
      expect(view.status).toBe('committed')
      expect(view.receipt.payer).toBe(PAYERS[i])
      expect(view.receipt.ar_tx_id_bytes32).toBe(arTxIdToBytes32(id))
      expect(view.receipt.batch).toMatchObject({ epoch: 1, root: batch.root, leaf_count: 3, arweave_tx: batch.treeArTxId })
      expect(view.onChain).toEqual({ chainId: 31337, contract: committer.contract, commitTxHash: committer.sent[0]!.hash, batchId: batch.batchId })
      const r = view.receipt
      const tuple: LeafTuple = [r.payer, r.ar_tx_id_bytes32, String(r.size_bytes), r.paid_atomics, r.currency]
      expect(StandardMerkleTree.verify(batch.root, [...LEAF_ENCODING], tuple, r.batch!.proof)).toBe(true)
      expect(r.batch!.leaf).toBe(tree.leafHash(tuple))
    }
    const second = await getReceiptProof(h.db, ledgerReceiptSource(h.db), ids[1]!)
    expect(second.receipt).toMatchObject({
      currency: 2,
      size_bytes: 20,
      paid_atomics: '7000',
      network: 'eip155:1',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      stored_at: 1_700_000_000,
    })
    expect(second.receipt.sha256).toMatch(/^[0-9a-f]{64}$/)
    const third = await getReceiptProof(h.db, ledgerReceiptSource(h.db), ids[2]!)
    expect(third.receipt.paid_atomics).toBe('12345678901234567890')
    await expect(getReceiptProof(h.db, ledgerReceiptSource(h.db), failed)).rejects.toBeInstanceOf(ReceiptNotFoundError)
    await expect(getReceiptProof(h.db, ledgerReceiptSource(h.db), randomArTxId())).rejects.toBeInstanceOf(ReceiptNotFoundError)

    // a second run finds nothing new and commits nothing
    const again = await run()
    expect(again).toEqual({ resumed: [], created: [], skipped: [], inProgress: [] })
    expect(committer.sent).toHaveLength(1)

    // a later upload goes into epoch 2 on its own
    const later = await insertLedgerRow(h.db, { payer: PAYERS[0], createdAt: 1_700_000_100 })
    const next = await run()
    expect(next.created.map((b) => [b.epoch, b.leafCount])).toEqual([[2, 1]])
    const lone = await getReceiptProof(h.db, ledgerReceiptSource(h.db), later)
    expect(lone.receipt.batch).toMatchObject({ epoch: 2, proof: [], root: lone.receipt.batch?.leaf })
  })

  it('reports a stored upload not yet batched as pending, and only batches uploads paid before the cutoff', async () => {
    const early = await insertLedgerRow(h.db, { payer: PAYERS[0], createdAt: 1000 })
    const late = await insertLedgerRow(h.db, { payer: PAYERS[1], createdAt: 2000 })
    const pending = await getReceiptProof(h.db, ledgerReceiptSource(h.db), late)
    expect(pending).toMatchObject({ status: 'pending', onChain: null, receipt: { payer: PAYERS[1], currency: 1, batch: null, stored_at: 2000 } })
    const result = await run({ cutoff: 2000 })
    expect(result.created[0]?.leafCount).toBe(1)
    expect((await getReceiptProof(h.db, ledgerReceiptSource(h.db), early)).status).toBe('committed')
    expect((await getReceiptProof(h.db, ledgerReceiptSource(h.db), late)).status).toBe('pending')
  })

  it('stored_at is when the upstream accepted the item (the receive time only for rows that lack it)', async () => {
    const id = await insertLedgerRow(h.db, { payer: PAYERS[0], createdAt: 1000, storedAt: 1300 })
    expect((await getReceiptProof(h.db, ledgerReceiptSource(h.db), id)).receipt.stored_at).toBe(1300)
    await run({ cutoff: 2000 })
    const batched = await getReceiptProof(h.db, ledgerReceiptSource(h.db), id)
    expect(batched).toMatchObject({ status: 'committed', receipt: { stored_at: 1300 } })
  })

  it('resumes after the tree upload failed, without rebuilding or re-reserving receipts', async () => {
    const id = await insertLedgerRow(h.db, { payer: PAYERS[0] })
    uploader.failNext = 1
    await expect(run()).rejects.toThrow(/tree file upload failed/)
    const stuck = await h.db.selectFrom('receipt_batches').selectAll().executeTakeFirstOrThrow()
    expect(stuck).toMatchObject({ status: 'built', tree_ar_tx_id: null })
    expect(stuck.last_error).toMatch(/upstream down/)
    expect(await getReceiptProof(h.db, ledgerReceiptSource(h.db), id)).toMatchObject({ status: 'batched', onChain: null, receipt: { batch: null } })
    expect(committer.sent).toHaveLength(0)

    const result = await run()
    expect(result.created).toHaveLength(0)
    expect(result.resumed).toMatchObject([{ batchId: stuck.batch_id, status: 'committed', epoch: 1 }])
    expect(await h.db.selectFrom('receipt_batches').select('batch_id').execute()).toHaveLength(1)
  })

  it('resumes after the commit could not be sent', async () => {
    await insertLedgerRow(h.db, { payer: PAYERS[0] })
    committer.failSend = 1
    await expect(run()).rejects.toThrow(/rpc down/)
    expect(await h.db.selectFrom('receipt_batches').select(['status', 'commit_tx_hash']).executeTakeFirst()).toEqual({
      status: 'stored',
      commit_tx_hash: null,
    })
    const result = await run()
    expect(result.resumed[0]).toMatchObject({ status: 'committed', epoch: 1 })
    expect(uploader.files).toHaveLength(1) // the tree file was not uploaded twice
  })

  it('follows a sent commit by its hash instead of sending it again', async () => {
    await insertLedgerRow(h.db, { payer: PAYERS[0] })
    committer.failWait = 1
    await expect(run()).rejects.toThrow(/rpc timeout/)
    const row = await h.db.selectFrom('receipt_batches').selectAll().executeTakeFirstOrThrow()
    expect(row.status).toBe('committing')
    expect(row.commit_tx_hash).toBe(committer.sent[0]!.hash)
    const result = await run()
    expect(result.resumed[0]).toMatchObject({ status: 'committed', epoch: 1, commitTxHash: row.commit_tx_hash })
    expect(committer.sent).toHaveLength(1)
    expect(committer.waited).toEqual([row.commit_tx_hash, row.commit_tx_hash])
  })

  it('splits more receipts than maxLeaves into several batches in one run', async () => {
    for (let i = 0; i < 5; i++) await insertLedgerRow(h.db, { payer: PAYERS[i % 3]!, createdAt: 1000 + i })
    const result = await run({ maxLeaves: 2 })
    expect(result.created.map((b) => [b.epoch, b.leafCount])).toEqual([
      [1, 2],
      [2, 2],
      [3, 1],
    ])
    const counts = await h.db.selectFrom('batch_receipts').select(['ar_tx_id']).execute()
    expect(new Set(counts.map((c) => c.ar_tx_id)).size).toBe(5)
  })

  it('leaves out a receipt that cannot become a leaf and reports it, batching the rest', async () => {
    // bad receipts first (older), then good ones; batches of one
    const bad = [
      await insertLedgerRow(h.db, { payer: 'not-an-address', createdAt: 100 }),
      await insertLedgerRow(h.db, { payer: PAYERS[0], network: 'eip155:10', createdAt: 101 }),
    ]
    const good = [
      await insertLedgerRow(h.db, { payer: PAYERS[0], createdAt: 102 }),
      await insertLedgerRow(h.db, { payer: PAYERS[1], createdAt: 103 }),
    ]
    const result = await run({ maxLeaves: 1 })
    expect(result.skipped).toEqual([
      { arTxId: bad[0], reason: expect.stringMatching(/not an EVM address/) },
      { arTxId: bad[1], reason: expect.stringMatching(/no currency code for network eip155:10/) },
    ])
    expect(result.created.map((b) => b.leafCount)).toEqual([1, 1])
    for (const id of good) expect((await getReceiptProof(h.db, ledgerReceiptSource(h.db), id)).status).toBe('committed')
    // reported again next run, nothing else happens
    const again = await run({ maxLeaves: 1 })
    expect(again.skipped.map((s) => s.arTxId)).toEqual(bad)
    expect(again.created).toEqual([])
  })

  it('maps Algorand receipts with their currency code', async () => {
    const payer = 'VCMJKWOY5P5P7SKMZFFOCEROPJCZOTIJMNIYNUCKH7LRO45JMJP6UYBIJA'
    const asa = await insertLedgerRow(h.db, { payer, network: 'algorand:genesis', asset: '31566704' })
    const algo = await insertLedgerRow(h.db, { payer, network: 'algorand:genesis', asset: 'ALGO' })
    await run()
    const a = await getReceiptProof(h.db, ledgerReceiptSource(h.db), asa)
    const b = await getReceiptProof(h.db, ledgerReceiptSource(h.db), algo)
    expect([a.receipt.currency, b.receipt.currency]).toEqual([3, 4])
    expect(a.receipt.payer).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(a.receipt.payer).toBe(b.receipt.payer)
  })

  it('emits a catalogue event when a batch is committed', async () => {
    await insertLedgerRow(h.db, { payer: PAYERS[0] })
    const events: { kind: string; payload: Record<string, unknown> }[] = []
    await run({
      events: {
        emit: async (e) => {
          events.push(e)
          return { ...e, event_id: 'x', actor: 'service.gateway', at: 0, severity: 'info', source_log: '' }
        },
      },
    })
    expect(events).toEqual([
      {
        kind: 'storage.batch.committed',
        payload: expect.objectContaining({ epoch: 1, leaf_count: 1, commit_tx_hash: committer.sent[0]!.hash as Hex }),
      },
    ])
    expect(catalogueEventErrors(events[0]!.kind, events[0]!.payload)).toBeUndefined()
  })
})

/**
 * Several runs over one database at once: the scheduler of every replica at the daily time, `npm run batch`
 * beside them. PostgreSQL: each run has its own pool, as replicas do; SQLite: the runs share one handle (a second
 * handle in the same process would wait for the first's write lock holding the event loop).
 */
describe.each(dialects)('receipt batch runs at once over one database (%s)', (dialect) => {
  let h: TestDatabase
  let handles: DatabaseHandle[]
  let uploader: FakeUploader
  let chain: FakeCommitter
  let errors: { msg: string | undefined; obj: object }[]
  const T = 1_800_000_000
  const log: BatchLogger = { info() {}, warn() {}, error: (obj, msg) => errors.push({ msg, obj }) }

  beforeEach(async () => {
    h = await createTestDatabase(dialect)
    handles = []
    uploader = new FakeUploader()
    chain = new FakeCommitter()
    errors = []
  })
  afterEach(async () => {
    for (const other of handles) await other.close()
    await h.close()
  })
  /** A database handle of its own for each replica on PostgreSQL; the one handle on SQLite. */
  const replicaDb = async () => {
    if (dialect === 'sqlite') return h.db
    const other = await createDatabase({ url: h.url, migrate: false })
    handles.push(other)
    return other.db
  }
  const run = (db: Kysely<Database>, over: Partial<Parameters<typeof runBatch>[0]> = {}) =>
    runBatch({ db, source: ledgerReceiptSource(db), uploader, committer: chain, now: () => T, log, ...over })
  const batches = () => h.db.selectFrom('receipt_batches').selectAll().orderBy('epoch').execute()

  /** Every batch committed once: one commitBatch per root, each row's epoch and tx being that commit's. */
  const expectEachRootCommittedOnce = async (receipts: number) => {
    const rows = await batches()
    expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'committed'))
    expect(chain.sent.map((s) => s.root).sort()).toEqual(rows.map((r) => r.root).sort())
    for (const row of rows) {
      const onChain = chain.sent[Number(row.epoch) - 1]
      expect(onChain).toMatchObject({ root: row.root, hash: row.commit_tx_hash, leafCount: row.leaf_count })
    }
    const members = await h.db.selectFrom('batch_receipts').select(['ar_tx_id', 'batch_id']).execute()
    expect(members).toHaveLength(receipts)
    expect(rows.reduce((n, r) => n + r.leaf_count, 0)).toBe(receipts)
  }

  it('three runs started at once: each root committed once, every receipt in one batch, no run fails', async () => {
    for (let i = 0; i < 5; i++) await insertLedgerRow(h.db, { payer: PAYERS[i % 3]!, createdAt: 1000 + i })
    const dbs = [await replicaDb(), await replicaDb(), await replicaDb()]
    const results = await Promise.allSettled(dbs.map((db) => run(db, { maxLeaves: 2 })))
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([])
    expect(errors).toEqual([])
    await expectEachRootCommittedOnce(5)
    expect(chain.sent).toHaveLength(3)
    const reported = results.flatMap((r) => (r.status === 'fulfilled' ? r.value.created : []))
    expect(reported.map((b) => b.epoch).sort()).toEqual([1, 2, 3])
  })

  it('a run that finds another run\'s commit in flight leaves it to that run: no second commitBatch', async () => {
    await insertLedgerRow(h.db, { payer: PAYERS[0] })
    chain.holdSends = true
    const first = run(await replicaDb())
    await waitFor('the first run to send its commit', async () => (chain.heldSends === 1 ? true : undefined), 10_000)
    expect((await batches())[0]).toMatchObject({ status: 'committing', commit_tx_hash: null })

    let secondDone = false
    const second = run(await replicaDb()).finally(() => (secondDone = true))
    await waitFor('the second run to finish or send', async () => (secondDone || chain.heldSends > 1 ? true : undefined), 10_000)
    chain.releaseSends()
    const [a, b] = await Promise.all([first, second])
    expect(chain.sendCalls).toBe(1)
    expect(a.created).toMatchObject([{ status: 'committed', epoch: 1 }])
    expect(b).toMatchObject({ resumed: [], created: [], skipped: [], inProgress: [{ batchId: a.created[0]!.batchId }] })
    expect(errors).toEqual([])
    await expectEachRootCommittedOnce(1)
  })

  it('a run that died after marking a batch committing, before sending: left alone while its lease runs, then sent by a later run', async () => {
    await insertLedgerRow(h.db, { payer: PAYERS[0] })
    const dying = dyingCommitter(chain, 'nothing')
    void run(await replicaDb(), { committer: dying })
    await dying.entered
    expect((await batches())[0]).toMatchObject({ status: 'committing', commit_tx_hash: null })

    const soon = await run(await replicaDb(), { now: () => T + 10 })
    expect(soon).toMatchObject({ resumed: [], created: [], inProgress: [{ status: 'committing' }] })
    expect(chain.sendCalls).toBe(0)

    const later = await run(await replicaDb(), { now: () => T + 3600 })
    expect(later.resumed).toMatchObject([{ status: 'committed', epoch: 1 }])
    expect(chain.sendCalls).toBe(1)
    expect(errors).toEqual([])
    await expectEachRootCommittedOnce(1)
  })

  it('a run that died after sending, before recording the hash: a later run finds the commit on chain and does not send again', async () => {
    await insertLedgerRow(h.db, { payer: PAYERS[0] })
    const dying = dyingCommitter(chain, 'chain')
    void run(await replicaDb(), { committer: dying })
    await dying.entered
    expect(chain.sent).toHaveLength(1)
    expect((await batches())[0]).toMatchObject({ status: 'committing', commit_tx_hash: null })

    const later = await run(await replicaDb(), { now: () => T + 3600 })
    expect(later.resumed).toMatchObject([{ status: 'committed', epoch: 1, commitTxHash: chain.sent[0]!.hash }])
    expect(chain.sendCalls).toBe(1) // the dead run's
    expect(errors).toEqual([])
    await expectEachRootCommittedOnce(1)
  })
})
