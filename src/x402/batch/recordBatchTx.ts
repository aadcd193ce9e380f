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

/** One row of `batch_settlement_txs` (migration 0018): a transaction the facilitator sent for the gateway's channels. */
export async function recordBatchTx(db: Kysely<Database>, tx: BatchTx, now: number): Promise<void> {
  await db
    .insertInto('batch_settlement_txs')
    .values({
      tx_id: randomUUID(),
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
