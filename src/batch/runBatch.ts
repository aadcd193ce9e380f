/**
 * The receipt batch (seed 000 §4.8): every stored, paid upload not yet in a batch becomes a leaf
 * `(payer, arTxid, sizeBytes, paidAtomics, currency)` of a StandardMerkleTree; the tree file
 * (`tree.dump()` JSON) is stored permanently; `commitBatch(root, leafCount, arweaveTx)` puts the root on
 * chain; the batch and every receipt's proof are recorded so `GET /store/receipts/{ar_tx_id}` can serve it.
 *
 * Each step is recorded before the next starts (`built` → `stored` → `committing` → `committed`), so a
 * run that fails half-way (upstream down, RPC down) is finished by the next run, and a commit transaction
 * already sent is followed by its hash rather than sent again. State changes are conditional updates, so
 * the scheduler and `npm run batch` running at once do not double-commit; a receipt is in at most one
 * batch (primary key of `batch_receipts`).
 */
import { randomUUID } from 'node:crypto'
import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import type { Kysely } from 'kysely'
import type { Hex } from 'viem'
import type { EventSink } from '../catalogue/EventSink.js'
import type { Database } from '../db/Database.js'
import type { ReceiptBatchesTable } from '../db/migrations/0005_batches.js'
import type { BatchCommitter } from './BatchCommitter.js'
import type { ReceiptSource, SettledReceipt } from './ReceiptSource.js'
import type { TreeUploader } from './TreeUploader.js'
import { BatchCommitFailedError, BatchTreeUploadFailedError } from './errors.js'
import {
  LEAF_ENCODING,
  type LeafTuple,
  type ReceiptLeaf,
  arTxIdToBytes32,
  currencyCode,
  payerAddress,
  toLeafTuple,
} from './receiptLeaf.js'

export type BatchLogger = {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
  error(obj: object, msg?: string): void
}

export type RunBatchParameters = {
  db: Kysely<Database>
  source: ReceiptSource
  uploader: TreeUploader
  committer: BatchCommitter
  /** Receipts paid before this instant are eligible (epoch seconds; default now). */
  cutoff?: number
  /** Most leaves per batch (default 10 000); more receipts make more batches in the same run. */
  maxLeaves?: number
  /** `App-Name` tag of the tree file. */
  appName?: string
  events?: EventSink
  log?: BatchLogger
  now?: () => number
}

export type BatchSummary = {
  batchId: string
  status: 'built' | 'stored' | 'committing' | 'committed'
  root: Hex
  leafCount: number
  treeArTxId: string | null
  commitTxHash: Hex | null
  epoch: number | null
  chainId: number | null
  contract: string | null
}

export type SkippedReceipt = { arTxId: string; reason: string }

export type BatchRunResult = {
  /** Batches left unfinished by earlier runs and finished now. */
  resumed: BatchSummary[]
  /** Batches made by this run. */
  created: BatchSummary[]
  /** Receipts that could not be turned into a leaf (left out, reported every run). */
  skipped: SkippedReceipt[]
}

const nowSeconds = () => Math.floor(Date.now() / 1000)
const silent: BatchLogger = { info() {}, warn() {}, error() {} }

export async function runBatch(p: RunBatchParameters): Promise<BatchRunResult> {
  const now = p.now ?? nowSeconds
  const log = p.log ?? silent
  const cutoff = p.cutoff ?? now()
  const maxLeaves = p.maxLeaves ?? 10_000
  const result: BatchRunResult = { resumed: [], created: [], skipped: [] }

  const pending = await p.db
    .selectFrom('receipt_batches')
    .selectAll()
    .where('status', '!=', 'committed')
    .orderBy('created_at')
    .execute()
  for (const row of pending) {
    log.info({ batch_id: row.batch_id, status: row.status }, 'resuming receipt batch')
    result.resumed.push(await advance(p, row, log, now))
  }

  const skippedIds = new Set<string>()
  for (;;) {
    // Ask for enough rows to fill a batch even after skipping the unmappable ones seen so far.
    const limit = maxLeaves + skippedIds.size
    const candidates = await p.source.unbatched(cutoff, limit)
    const leaves: { receipt: SettledReceipt; leaf: ReceiptLeaf }[] = []
    for (const receipt of candidates) {
      if (skippedIds.has(receipt.arTxId)) continue
      try {
        leaves.push({ receipt, leaf: toLeaf(receipt) })
      } catch (err) {
        skippedIds.add(receipt.arTxId)
        const reason = err instanceof Error ? err.message : String(err)
        result.skipped.push({ arTxId: receipt.arTxId, reason })
        log.warn({ ar_tx_id: receipt.arTxId, reason }, 'receipt left out of the batch')
      }
      if (leaves.length === maxLeaves) break
    }
    if (leaves.length > 0) {
      const row = await build(p.db, leaves, cutoff, now())
      log.info({ batch_id: row.batch_id, root: row.root, leaf_count: row.leaf_count }, 'receipt batch built')
      result.created.push(await advance(p, row, log, now))
    }
    // Fewer rows than asked: the source is drained. Otherwise every pass batched or newly skipped at
    // least one receipt, so the loop ends.
    if (candidates.length < limit) break
  }
  return result
}

export function toLeaf(r: SettledReceipt): ReceiptLeaf {
  return {
    payer: payerAddress(r.network, r.payer),
    arTxid: arTxIdToBytes32(r.arTxId),
    sizeBytes: r.sizeBytes,
    paidAtomics: r.paidAtomics,
    currency: currencyCode(r.network, r.asset),
  }
}

async function build(
  db: Kysely<Database>,
  leaves: { receipt: SettledReceipt; leaf: ReceiptLeaf }[],
  cutoff: number,
  at: number,
): Promise<ReceiptBatchesTable> {
  const tree = StandardMerkleTree.of<LeafTuple>(
    leaves.map((l) => toLeafTuple(l.leaf)),
    [...LEAF_ENCODING],
  )
  const row: ReceiptBatchesTable = {
    batch_id: `batch_${randomUUID()}`,
    status: 'built',
    cutoff_at: cutoff,
    root: tree.root,
    leaf_count: leaves.length,
    tree_json: JSON.stringify(tree.dump()),
    tree_ar_tx_id: null,
    chain_id: null,
    contract_address: null,
    commit_tx_hash: null,
    epoch: null,
    last_error: null,
    created_at: at,
    updated_at: at,
    committed_at: null,
  }
  // tree.entries() follows the input order: value index i is leaves[i].
  const receipts = [...tree.entries()].map(([i]) => {
    const { receipt, leaf } = leaves[i] as { receipt: SettledReceipt; leaf: ReceiptLeaf }
    return {
      ar_tx_id: receipt.arTxId,
      batch_id: row.batch_id,
      leaf_index: i,
      upload_id: receipt.uploadId,
      deposit_id: receipt.depositId,
      network: receipt.network,
      asset: receipt.asset,
      payer: leaf.payer,
      ar_txid_hex: leaf.arTxid,
      size_bytes: leaf.sizeBytes.toString(),
      paid_atomics: leaf.paidAtomics.toString(),
      currency: leaf.currency,
      leaf_hash: tree.leafHash(toLeafTuple(leaf)),
      proof: JSON.stringify(tree.getProof(i)),
      sha256: receipt.sha256,
      stored_at: receipt.storedAt,
      created_at: at,
    }
  })
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('receipt_batches').values(row).execute()
    // chunks keep SQLite under its bound-parameter limit
    for (let i = 0; i < receipts.length; i += 500) {
      await trx.insertInto('batch_receipts').values(receipts.slice(i, i + 500)).execute()
    }
  })
  return row
}

/** What each step of a batch's advance shares: the run's parameters, the row as last read, and how a step fails. */
type BatchStep = {
  p: RunBatchParameters
  log: BatchLogger
  now: () => number
  row: () => ReceiptBatchesTable
  reload: () => Promise<ReceiptBatchesTable>
  /** Records the error on the row, logs it and throws it. */
  fail: (err: unknown) => Promise<never>
}

/** Takes a batch as far as it goes in one run: built → stored (tree uploaded) → committing (sent) → committed. */
async function advance(
  p: RunBatchParameters,
  start: ReceiptBatchesTable,
  log: BatchLogger,
  now: () => number,
): Promise<BatchSummary> {
  let row = start
  const step: BatchStep = {
    p,
    log,
    now,
    row: () => row,
    reload: async () => (row = await p.db.selectFrom('receipt_batches').selectAll().where('batch_id', '=', row.batch_id).executeTakeFirstOrThrow()),
    fail: async (err) => {
      const message = err instanceof Error ? err.message : String(err)
      await p.db
        .updateTable('receipt_batches')
        .set({ last_error: message.slice(0, 2000), updated_at: now() })
        .where('batch_id', '=', row.batch_id)
        .execute()
      log.error({ batch_id: row.batch_id, status: row.status, err: message }, 'receipt batch step failed')
      throw err
    },
  }
  if (row.status === 'built') await uploadTree(step)
  // `committing` without a hash: a run died between claiming and sending; nothing was sent.
  if (row.status === 'stored' || (row.status === 'committing' && !row.commit_tx_hash)) {
    const sent = await sendCommit(step)
    if (!sent) return summary(row) // another run took it
  }
  if (row.status === 'committing' && row.commit_tx_hash) await confirmCommit(step)
  return summary(row)
}

/** built → stored: the tree file goes to Arweave, tagged so anyone can find a batch by its root. */
async function uploadTree({ p, now, row, reload, fail }: BatchStep): Promise<void> {
  const batch = row()
  let arTxId: string
  try {
    const tags = [
      { name: 'Content-Type', value: 'application/json' },
      { name: 'App-Name', value: p.appName ?? 'pay2store-gateway' },
      { name: 'App-Version', value: '1.0' },
      { name: 'SVC-Service', value: 'pay2store' },
      { name: 'SVC-Type', value: 'receipt-batch-tree' },
      { name: 'SVC-Batch-Root', value: batch.root },
      { name: 'SVC-Batch-Leaves', value: String(batch.leaf_count) },
    ]
    ;({ arTxId } = await p.uploader.upload(new TextEncoder().encode(batch.tree_json), tags))
    arTxIdToBytes32(arTxId)
  } catch (err) {
    return fail(new BatchTreeUploadFailedError(`tree file upload failed: ${(err as Error).message}`, err))
  }
  await p.db
    .updateTable('receipt_batches')
    .set({ status: 'stored', tree_ar_tx_id: arTxId, last_error: null, updated_at: now() })
    .where('batch_id', '=', batch.batch_id)
    .where('status', '=', 'built')
    .execute()
  await reload()
}

/** stored → committing: claims the batch (one run only), sends the commit and keeps its hash. False: another run has it. */
async function sendCommit({ p, now, row, reload, fail }: BatchStep): Promise<boolean> {
  const batch = row()
  const claimed = await p.db
    .updateTable('receipt_batches')
    .set({
      status: 'committing',
      chain_id: p.committer.chainId,
      contract_address: p.committer.contract,
      updated_at: now(),
    })
    .where('batch_id', '=', batch.batch_id)
    .where('status', '=', batch.status)
    .where('commit_tx_hash', 'is', null)
    .executeTakeFirst()
  if (claimed.numUpdatedRows === 0n) {
    await reload()
    return false
  }
  let txHash: Hex
  try {
    txHash = await p.committer.send(batch.root as Hex, batch.leaf_count, arTxIdToBytes32(batch.tree_ar_tx_id as string))
  } catch (err) {
    await p.db
      .updateTable('receipt_batches')
      .set({ status: 'stored', updated_at: now() })
      .where('batch_id', '=', batch.batch_id)
      .execute()
    await reload()
    return fail(err)
  }
  await p.db
    .updateTable('receipt_batches')
    .set({ commit_tx_hash: txHash, updated_at: now() })
    .where('batch_id', '=', batch.batch_id)
    .execute()
  await reload()
  return true
}

/** committing → committed: waits for the commit's receipt, records its epoch and tells the event sink. */
async function confirmCommit({ p, log, now, row, reload, fail }: BatchStep): Promise<void> {
  const batch = row()
  let epoch: number
  try {
    ;({ epoch } = await p.committer.wait(batch.commit_tx_hash as Hex))
  } catch (err) {
    if (err instanceof BatchCommitFailedError) {
      // mined and reverted (or no event): allow a fresh send next time
      await p.db
        .updateTable('receipt_batches')
        .set({ status: 'stored', commit_tx_hash: null, updated_at: now() })
        .where('batch_id', '=', batch.batch_id)
        .execute()
    }
    return fail(err)
  }
  const at = now()
  await p.db
    .updateTable('receipt_batches')
    .set({ status: 'committed', epoch, committed_at: at, last_error: null, updated_at: at })
    .where('batch_id', '=', batch.batch_id)
    .where('status', '=', 'committing')
    .execute()
  const committed = await reload()
  log.info({ batch_id: committed.batch_id, epoch, tx: committed.commit_tx_hash }, 'receipt batch committed')
  await p.events?.emit({
    kind: 'storage.batch.committed',
    payload: {
      batch_id: committed.batch_id,
      epoch,
      root: committed.root,
      leaf_count: committed.leaf_count,
      tree_ar_tx_id: committed.tree_ar_tx_id,
      chain_id: committed.chain_id,
      contract: committed.contract_address,
      commit_tx_hash: committed.commit_tx_hash,
    },
  })
}

function summary(row: ReceiptBatchesTable): BatchSummary {
  return {
    batchId: row.batch_id,
    status: row.status as BatchSummary['status'],
    root: row.root as Hex,
    leafCount: row.leaf_count,
    treeArTxId: row.tree_ar_tx_id,
    commitTxHash: row.commit_tx_hash as Hex | null,
    epoch: row.epoch === null ? null : Number(row.epoch),
    chainId: row.chain_id === null ? null : Number(row.chain_id),
    contract: row.contract_address,
  }
}
