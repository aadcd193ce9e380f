import type { Kysely } from 'kysely'
import type { Hex } from 'viem'
import type { Database } from '../db/Database.js'
import type { ReceiptSource } from './ReceiptSource.js'
import { ReceiptNotFoundError } from './errors.js'
import { toLeaf } from './runBatch.js'

/**
 * The `Receipt` body of `GET /store/receipts/{ar_tx_id}` (openapi/gateway.yaml): the leaf fields and, once
 * the receipt's batch is committed, everything `attestLeaf(epoch, payer, arTxid, sizeBytes, paidAtomics,
 * currency, proof)` needs. Amounts are decimal strings.
 */
export type ReceiptBody = {
  ar_tx_id: string
  ar_tx_id_bytes32: Hex
  payer: Hex
  network: string
  asset: string
  currency: number
  size_bytes: number
  paid_atomics: string
  sha256: string
  stored_at: number
  batch: {
    epoch: number
    root: Hex
    leaf_count: number
    arweave_tx: string
    leaf: Hex
    proof: Hex[]
  } | null
}

/**
 * A receipt lookup: the body above, its state (`pending` — in no batch yet; `batched` — in a batch whose
 * root is not on chain yet, `batch` stays null; `committed`), and where the root was committed.
 */
export type ReceiptLookup = {
  status: 'pending' | 'batched' | 'committed'
  receipt: ReceiptBody
  onChain: { chainId: number; contract: Hex; commitTxHash: Hex; batchId: string } | null
}

/**
 * The `Receipt` response body: the receipt plus where `attestLeaf` is called — the chain, the ReceiptBatches
 * contract and the `commitBatch` transaction — all null until the batch is committed (as `batch`).
 */
export type ReceiptView = ReceiptBody & { chain_id: number | null; contract: Hex | null; commit_tx: Hex | null }

export function receiptView({ receipt, onChain }: ReceiptLookup): ReceiptView {
  return { ...receipt, chain_id: onChain?.chainId ?? null, contract: onChain?.contract ?? null, commit_tx: onChain?.commitTxHash ?? null }
}

/** Throws ReceiptNotFoundError when the id is neither batched nor a stored, paid upload. */
export async function getReceiptProof(
  db: Kysely<Database>,
  source: Pick<ReceiptSource, 'byArTxId'>,
  arTxId: string,
): Promise<ReceiptLookup> {
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
    ])
    .where('r.ar_tx_id', '=', arTxId)
    .executeTakeFirst()

  if (row) {
    const committed = row.batch_status === 'committed' && row.epoch !== null
    return {
      status: committed ? 'committed' : 'batched',
      receipt: {
        ar_tx_id: arTxId,
        ar_tx_id_bytes32: row.ar_txid_hex as Hex,
        payer: row.payer as Hex,
        network: row.network,
        asset: row.asset,
        currency: row.currency,
        size_bytes: Number(row.size_bytes),
        paid_atomics: row.paid_atomics,
        sha256: row.sha256,
        stored_at: Number(row.stored_at),
        batch: committed
          ? {
              epoch: Number(row.epoch),
              root: row.root as Hex,
              leaf_count: row.leaf_count,
              arweave_tx: row.tree_ar_tx_id as string,
              leaf: row.leaf_hash as Hex,
              proof: JSON.parse(row.proof) as Hex[],
            }
          : null,
      },
      onChain: committed
        ? {
            chainId: Number(row.chain_id),
            contract: row.contract_address as Hex,
            commitTxHash: row.commit_tx_hash as Hex,
            batchId: row.batch_id,
          }
        : null,
    }
  }

  const receipt = await source.byArTxId(arTxId)
  if (!receipt) throw new ReceiptNotFoundError(arTxId)
  const leaf = toLeaf(receipt)
  return {
    status: 'pending',
    receipt: {
      ar_tx_id: arTxId,
      ar_tx_id_bytes32: leaf.arTxid,
      payer: leaf.payer,
      network: receipt.network,
      asset: receipt.asset,
      currency: leaf.currency,
      size_bytes: Number(receipt.sizeBytes),
      paid_atomics: leaf.paidAtomics.toString(),
      sha256: receipt.sha256,
      stored_at: receipt.storedAt,
      batch: null,
    },
    onChain: null,
  }
}
