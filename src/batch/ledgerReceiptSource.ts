import type { Kysely } from 'kysely'
import type { Database } from '../db/Database.js'
import type { ReceiptSource, SettledReceipt } from './ReceiptSource.js'

/** Upload states that mean "bytes are on the permaweb": stored, and stored-then-verified. */
export const RECEIPT_UPLOAD_STATES = ['stored', 'verified'] as const

/**
 * Reads receipts from the paid-storage ledger (`storage_deposits` ⋈ `storage_uploads`, migration 0004):
 * a receipt is an upload with a storage id in a receipt state whose deposit is `settled`.
 */
export function ledgerReceiptSource(db: Kysely<Database>): ReceiptSource {
  const base = () =>
    db
      .selectFrom('storage_uploads as u')
      .innerJoin('storage_deposits as d', 'd.deposit_id', 'u.deposit_id')
      .select([
        'u.ar_tx_id',
        'u.upload_id',
        'u.deposit_id',
        'u.size_bytes',
        'u.sha256',
        'u.created_at',
        'u.stored_at',
        'd.network',
        'd.asset',
        'd.payer',
        'd.amount_atomic',
      ])
      .where('u.ar_tx_id', 'is not', null)
      .where('u.status', 'in', [...RECEIPT_UPLOAD_STATES])
      .where('d.status', '=', 'settled')

  const toReceipt = (r: {
    ar_tx_id: string | null
    upload_id: string
    deposit_id: string
    size_bytes: number
    sha256: string
    created_at: number
    stored_at: number | null
    network: string
    asset: string
    payer: string
    amount_atomic: string
  }): SettledReceipt => ({
    arTxId: r.ar_tx_id as string,
    uploadId: r.upload_id,
    depositId: r.deposit_id,
    network: r.network,
    asset: r.asset,
    payer: r.payer,
    sizeBytes: BigInt(r.size_bytes),
    sha256: r.sha256,
    paidAtomics: BigInt(r.amount_atomic),
    paidAt: Number(r.created_at),
    storedAt: Number(r.stored_at ?? r.created_at),
  })

  return {
    async unbatched(cutoff, limit) {
      const rows = await base()
        .where('u.created_at', '<', cutoff)
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('batch_receipts as b').select('b.ar_tx_id').whereRef('b.ar_tx_id', '=', 'u.ar_tx_id'))),
        )
        .orderBy('u.created_at')
        .orderBy('u.upload_id')
        .limit(limit)
        .execute()
      return rows.map(toReceipt)
    },
    async byArTxId(arTxId) {
      const row = await base().where('u.ar_tx_id', '=', arTxId).executeTakeFirst()
      return row ? toReceipt(row) : undefined
    },
  }
}
