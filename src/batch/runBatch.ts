/**
 * The receipt batch (seed 000 §4.8): every stored, paid upload not yet in a batch becomes a leaf
 * `(payer, arTxid, sizeBytes, paidAtomics, currency)` of a StandardMerkleTree; the tree file
 * (`tree.dump()` JSON) is stored permanently; `commitBatch(root, leafCount, arweaveTx)` puts the root on
 * chain; the batch and every receipt's proof are recorded so `GET /store/receipts/{ar_tx_id}` can serve it.
 *
 * Each step is recorded before the next starts (`built` → `stored` → `committing` → `committed`), so a
 * run that fails half-way (upstream down, RPC down) is finished by the next run, and a commit transaction
 * already sent is followed by its hash rather than sent again.
 *
 * Runs at once (the scheduler of every replica, `npm run batch`) do not double-commit: a run holds the batch it
 * works on (`claimed_by`, `claimed_until`: a lease of `leaseSeconds`, migration 0020), taken with one conditional
 * update and renewed at each step, and every step it records is conditional on still holding it. A run that
 * finds a batch held by another run leaves it (reported in `inProgress`), and one whose receipts another run
 * batched first (primary key of `batch_receipts`: a receipt is in at most one batch) looks again for the rest;
 * neither is an error. A batch left `committing` without a hash is taken over only once its holder's lease has
 * run out, and its commit is first looked for on chain (`findCommit`, from the block recorded before the send):
 * found, it is followed; only otherwise is it sent.
 */
import { randomUUID } from 'node:crypto'
import { StandardMerkleTree } from '@openzeppelin/merkle-tree'
import type { Kysely } from 'kysely'
import type { Hex } from 'viem'
import type { EventSink } from '../catalogue/EventSink.js'
import type { Database } from '../db/Database.js'
import { isUniqueViolation } from '../db/isUniqueViolation.js'
import type { ReceiptBatchesTable } from '../db/migrations/0005_batches.js'
import type { BatchCommitter, CommitResult } from './BatchCommitter.js'
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
  /**
   * Seconds a run holds a batch it works on, from each step it starts (default 600): longer than one step takes
   * (a tree upload, a commit's wait of at most 120 s). A run that stopped holding one blocks it this long.
   */
  leaseSeconds?: number
  /** The run's name in `claimed_by` (default a fresh id). */
  runId?: string
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
  /** Unfinished batches another run holds (its lease has not run out): left to it. */
  inProgress: BatchSummary[]
}

/** Default of `leaseSeconds`. */
export const BATCH_LEASE_SECONDS = 600

const nowSeconds = () => Math.floor(Date.now() / 1000)
const silent: BatchLogger = { info() {}, warn() {}, error() {} }

export async function runBatch(p: RunBatchParameters): Promise<BatchRunResult> {
  const now = p.now ?? nowSeconds
  const log = p.log ?? silent
  const run: Run = { p, log, now, id: p.runId ?? `run_${randomUUID()}`, leaseSeconds: p.leaseSeconds ?? BATCH_LEASE_SECONDS }
  const cutoff = p.cutoff ?? now()
  const maxLeaves = p.maxLeaves ?? 10_000
  const result: BatchRunResult = { resumed: [], created: [], skipped: [], inProgress: [] }

  const pending = await p.db
    .selectFrom('receipt_batches')
    .selectAll()
    .where('status', '!=', 'committed')
    .orderBy('created_at')
    .execute()
  for (const found of pending) {
    const { row, held } = await take(run, found)
    if (!held) {
      if (row.status !== 'committed') {
        log.info({ batch_id: row.batch_id, status: row.status, held_until: row.claimed_until }, 'receipt batch held by another run; left to it')
        result.inProgress.push(summary(row))
      }
      continue
    }
    log.info({ batch_id: row.batch_id, status: row.status }, 'resuming receipt batch')
    result.resumed.push(await advance(run, row))
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
      const row = await build(run, leaves, cutoff)
      if (!row) {
        // another run batched some of these receipts first: look again for the ones still unbatched
        log.info({ receipts: leaves.length }, 'receipts batched by another run meanwhile; looking again')
        continue
      }
      log.info({ batch_id: row.batch_id, root: row.root, leaf_count: row.leaf_count }, 'receipt batch built')
      result.created.push(await advance(run, row))
    }
    // Fewer rows than asked: the source is drained. Otherwise every pass batched or newly skipped at
    // least one receipt (or another run batched one), so the loop ends.
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

/** Records a new batch, held by this run; undefined when another run put one of its receipts in a batch first. */
async function build(
  run: Run,
  leaves: { receipt: SettledReceipt; leaf: ReceiptLeaf }[],
  cutoff: number,
): Promise<ReceiptBatchesTable | undefined> {
  const at = run.now()
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
    claimed_by: run.id,
    claimed_until: at + run.leaseSeconds,
    commit_from_block: null,
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
  try {
    await run.p.db.transaction().execute(async (trx) => {
      await trx.insertInto('receipt_batches').values(row).execute()
      // chunks keep SQLite under its bound-parameter limit
      for (let i = 0; i < receipts.length; i += 500) {
        await trx.insertInto('batch_receipts').values(receipts.slice(i, i + 500)).execute()
      }
    })
  } catch (err) {
    if (isUniqueViolation(err)) return undefined // rolled back: nothing of this batch was kept
    throw err
  }
  return row
}

/** One run: its parameters and its name in `claimed_by`. */
type Run = {
  p: RunBatchParameters
  log: BatchLogger
  now: () => number
  id: string
  leaseSeconds: number
}

/**
 * Takes `found` for this run when it is unfinished and free: never held, its holder's lease run out, or already
 * this run's. One conditional update, so of any number of runs at once one gets it. Returns the row as it is now.
 */
async function take(run: Run, found: ReceiptBatchesTable): Promise<{ row: ReceiptBatchesTable; held: boolean }> {
  const t = run.now()
  const taken = await run.p.db
    .updateTable('receipt_batches')
    .set({ claimed_by: run.id, claimed_until: t + run.leaseSeconds })
    .where('batch_id', '=', found.batch_id)
    .where('status', '!=', 'committed')
    .where((eb) => eb.or([eb('claimed_until', '<', t), eb('claimed_by', '=', run.id)]))
    .executeTakeFirst()
  const row = await run.p.db.selectFrom('receipt_batches').selectAll().where('batch_id', '=', found.batch_id).executeTakeFirstOrThrow()
  return { row, held: Number(taken.numUpdatedRows) === 1 }
}

/** What each step of a batch's advance shares: the run, the row as last read, and how a step fails. */
type BatchStep = Run & {
  row: () => ReceiptBatchesTable
  reload: () => Promise<ReceiptBatchesTable>
  /** The set of a step's update that renews this run's hold on the batch. */
  renewed: () => { claimed_until: number; updated_at: number }
  /** Records the error on the row, gives the batch back, logs the error and throws it. */
  fail: (err: unknown) => Promise<never>
}

/**
 * Takes a batch this run holds as far as it goes in one run: built → stored (tree uploaded) → committing (sent) →
 * committed. A step that finds the batch no longer held by this run (its lease ran out and another run took it)
 * stops quietly and leaves the batch to that run.
 */
async function advance(run: Run, start: ReceiptBatchesTable): Promise<BatchSummary> {
  const { p, log, now } = run
  let row = start
  const step: BatchStep = {
    ...run,
    row: () => row,
    reload: async () => (row = await p.db.selectFrom('receipt_batches').selectAll().where('batch_id', '=', row.batch_id).executeTakeFirstOrThrow()),
    renewed: () => {
      const t = now()
      return { claimed_until: t + run.leaseSeconds, updated_at: t }
    },
    fail: async (err) => {
      const message = err instanceof Error ? err.message : String(err)
      await p.db
        .updateTable('receipt_batches')
        .set({ last_error: message.slice(0, 2000), updated_at: now(), claimed_by: null, claimed_until: 0 })
        .where('batch_id', '=', row.batch_id)
        .where('claimed_by', '=', run.id)
        .execute()
      log.error({ batch_id: row.batch_id, status: row.status, err: message }, 'receipt batch step failed')
      throw err
    },
  }
  if (row.status === 'built' && !(await uploadTree(step))) return lost(step)
  // `committing` without a hash, held by this run: the run that marked it stopped holding it; it may have sent
  if (row.status === 'stored' || (row.status === 'committing' && !row.commit_tx_hash)) {
    if (!(await sendCommit(step))) return lost(step)
  }
  if (row.status === 'committing' && row.commit_tx_hash) await confirmCommit(step)
  return summary(row)
}

/** The batch is no longer this run's: another run took it after this run's lease ran out. */
function lost({ log, row }: BatchStep): BatchSummary {
  log.warn({ batch_id: row().batch_id, status: row().status, held_by: row().claimed_by }, 'receipt batch taken over by another run; left to it')
  return summary(row())
}

/** built → stored: the tree file goes to Arweave, tagged so anyone can find a batch by its root. False: no longer held. */
async function uploadTree({ p, id, row, reload, renewed, fail }: BatchStep): Promise<boolean> {
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
  const stored = await p.db
    .updateTable('receipt_batches')
    .set({ status: 'stored', tree_ar_tx_id: arTxId, last_error: null, ...renewed() })
    .where('batch_id', '=', batch.batch_id)
    .where('status', '=', 'built')
    .where('claimed_by', '=', id)
    .executeTakeFirst()
  await reload()
  return Number(stored.numUpdatedRows) === 1
}

/**
 * stored → committing: sends the commit and keeps its hash. A batch already `committing` without a hash (its
 * earlier holder stopped) is first looked for on chain, from the block recorded before that send: found, its
 * transaction is recorded and followed instead of sending again. False: the batch is no longer this run's.
 */
async function sendCommit({ p, log, now, id, row, reload, renewed, fail }: BatchStep): Promise<boolean> {
  const batch = row()
  const root = batch.root as Hex
  if (batch.status === 'committing') {
    let found: CommitResult | undefined
    try {
      found = await p.committer.findCommit(root, batch.commit_from_block === null ? null : BigInt(batch.commit_from_block))
    } catch (err) {
      return fail(err)
    }
    if (found) {
      log.info({ batch_id: batch.batch_id, tx: found.txHash, epoch: found.epoch }, 'commit of a stopped run found on chain; following it')
      const recorded = await p.db
        .updateTable('receipt_batches')
        .set({ commit_tx_hash: found.txHash, ...renewed() })
        .where('batch_id', '=', batch.batch_id)
        .where('status', '=', 'committing')
        .where('commit_tx_hash', 'is', null)
        .where('claimed_by', '=', id)
        .executeTakeFirst()
      await reload()
      return Number(recorded.numUpdatedRows) === 1
    }
  }
  let fromBlock: bigint
  try {
    fromBlock = await p.committer.latestBlock()
  } catch (err) {
    return fail(err)
  }
  const claimed = await p.db
    .updateTable('receipt_batches')
    .set({
      status: 'committing',
      chain_id: p.committer.chainId,
      contract_address: p.committer.contract,
      commit_from_block: Number(fromBlock),
      ...renewed(),
    })
    .where('batch_id', '=', batch.batch_id)
    .where('status', '=', batch.status)
    .where('commit_tx_hash', 'is', null)
    .where('claimed_by', '=', id)
    .executeTakeFirst()
  if (Number(claimed.numUpdatedRows) === 0) {
    await reload()
    return false
  }
  let txHash: Hex
  try {
    txHash = await p.committer.send(root, batch.leaf_count, arTxIdToBytes32(batch.tree_ar_tx_id as string))
  } catch (err) {
    await p.db
      .updateTable('receipt_batches')
      .set({ status: 'stored', updated_at: now() })
      .where('batch_id', '=', batch.batch_id)
      .where('claimed_by', '=', id)
      .execute()
    await reload()
    return fail(err)
  }
  const recorded = await p.db
    .updateTable('receipt_batches')
    .set({ commit_tx_hash: txHash, ...renewed() })
    .where('batch_id', '=', batch.batch_id)
    .where('commit_tx_hash', 'is', null)
    .where('claimed_by', '=', id)
    .executeTakeFirst()
  await reload()
  if (Number(recorded.numUpdatedRows) === 0) {
    // the send outlasted the lease and another run took the batch over (it looked on chain first)
    log.error({ batch_id: batch.batch_id, tx: txHash }, 'commit sent after this run\'s lease on the batch ran out')
    return false
  }
  return true
}

/** committing → committed: waits for the commit's receipt, records its epoch and tells the event sink. */
async function confirmCommit({ p, log, now, id, row, reload, fail }: BatchStep): Promise<void> {
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
        .where('commit_tx_hash', '=', batch.commit_tx_hash as string)
        .where('claimed_by', '=', id)
        .execute()
    }
    return fail(err)
  }
  const at = now()
  // whichever run following this hash records it first; only that one tells the event sink
  const done = await p.db
    .updateTable('receipt_batches')
    .set({ status: 'committed', epoch, committed_at: at, last_error: null, updated_at: at, claimed_by: null, claimed_until: 0 })
    .where('batch_id', '=', batch.batch_id)
    .where('status', '=', 'committing')
    .where('commit_tx_hash', '=', batch.commit_tx_hash as string)
    .executeTakeFirst()
  const committed = await reload()
  if (Number(done.numUpdatedRows) === 0) return
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
