import { randomUUID } from 'node:crypto'
import type { Kysely } from 'kysely'
import type { Database } from '../../db/Database.js'

export type BatchTx = {
  kind: 'deposit' | 'claim' | 'settle' | 'refund'
  network: string
  txHash: string
  /** Vouchers a claim carried (0 otherwise). */
  vouchers: number
  /** What moved, atomic units ('' when nothing moved or it is not known). */
  amount: string
  channelId?: string
}

let lastMs = 0

/**
 * A row id that sorts in the order the rows were written: `created_at` has whole seconds, and a claim and its sweep
 * are written within one (the claim job reads the latest of them to know whether a claim is still unswept). A
 * millisecond clock, never going back in this process, then a random part for rows of other instances.
 */
function sortableId(): string {
  lastMs = Math.max(Date.now(), lastMs + 1)
  return `${lastMs.toString(36).padStart(10, '0')}-${randomUUID()}`
}

/** One row of `batch_settlement_txs` (migration 0018): a transaction the facilitator sent for the gateway's channels. */
export async function recordBatchTx(db: Kysely<Database>, tx: BatchTx, now: number): Promise<void> {
  await db
    .insertInto('batch_settlement_txs')
    .values({
      tx_id: sortableId(),
      kind: tx.kind,
      network: tx.network,
      tx_hash: tx.txHash,
      vouchers: tx.vouchers,
      amount_atomic: tx.amount,
      channel_id: tx.channelId?.toLowerCase() ?? null,
      created_at: now,
    })
    .execute()
}
