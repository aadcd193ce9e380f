import type { Kysely } from 'kysely'
import type { Hex } from 'viem'
import type { Database } from '../db/Database.js'
import type { ReceiptSource } from './ReceiptSource.js'
import { ReceiptNotFoundError } from './errors.js'
import { toLeaf } from './runBatch.js'

/**
 * A receipt and, once its batch is committed, everything `attestLeaf(epoch, payer, arTxid, sizeBytes,
 * paidAtomics, currency, proof)` needs. Amounts are decimal strings; `arTxid` is the bytes32 form of
 * `arTxId`.
 *
 * `status`: `pending` — stored and paid, in no batch yet; `batched` — in a batch whose root is not on
 * chain yet (`batch.epoch` null); `committed` — the proof can be submitted.
 */
export type ReceiptProofView = {
  arTxId: string
  status: 'pending' | 'batched' | 'committed'
  receipt: {
    payer: Hex
    arTxid: Hex
    sizeBytes: string
    paidAtomics: string
    currency: number
    network: string
  }
  batch: {
    batchId: string
    epoch: number | null
    root: Hex
    leafCount: number
    leafIndex: number
    leaf: Hex
    proof: Hex[]
    treeArTxId: string | null
    chainId: number | null
    contract: Hex | null
    commitTxHash: Hex | null
    committedAt: number | null
  } | null
}

/** Throws ReceiptNotFoundError when the id is neither batched nor a stored, paid upload. */
export async function getReceiptProof(
  db: Kysely<Database>,
  source: Pick<ReceiptSource, 'byArTxId'>,
  arTxId: string,
): Promise<ReceiptProofView> {
  const row = await db
    .selectFrom('batch_receipts as r')
    .innerJoin('receipt_batches as b', 'b.batch_id', 'r.batch_id')
    .selectAll('r')
    .select([
      'b.status as batch_status',
      'b.epoch',
      'b.root',
      'b.leaf_count',
      'b.tree_ar_tx_id',
      'b.chain_id',
      'b.contract_address',
      'b.commit_tx_hash',
      'b.committed_at',
    ])
    .where('r.ar_tx_id', '=', arTxId)
    .executeTakeFirst()

  if (row) {
    const committed = row.batch_status === 'committed'
    return {
      arTxId,
      status: committed ? 'committed' : 'batched',
      receipt: {
        payer: row.payer as Hex,
        arTxid: row.ar_txid_hex as Hex,
        sizeBytes: row.size_bytes,
        paidAtomics: row.paid_atomics,
        currency: row.currency,
        network: row.network,
      },
      batch: {
        batchId: row.batch_id,
        epoch: committed && row.epoch !== null ? Number(row.epoch) : null,
        root: row.root as Hex,
        leafCount: row.leaf_count,
        leafIndex: row.leaf_index,
        leaf: row.leaf_hash as Hex,
        proof: JSON.parse(row.proof) as Hex[],
        treeArTxId: row.tree_ar_tx_id,
        chainId: row.chain_id === null ? null : Number(row.chain_id),
        contract: row.contract_address as Hex | null,
        commitTxHash: committed ? (row.commit_tx_hash as Hex | null) : null,
        committedAt: row.committed_at === null ? null : Number(row.committed_at),
      },
    }
  }

  const receipt = await source.byArTxId(arTxId)
  if (!receipt) throw new ReceiptNotFoundError(arTxId)
  const leaf = toLeaf(receipt)
  return {
    arTxId,
    status: 'pending',
    receipt: {
      payer: leaf.payer,
      arTxid: leaf.arTxid,
      sizeBytes: leaf.sizeBytes.toString(),
      paidAtomics: leaf.paidAtomics.toString(),
      currency: leaf.currency,
      network: receipt.network,
    },
    batch: null,
  }
}
