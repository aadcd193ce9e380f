import type { BatchService } from '../../services/createBatchService.js'
import type { Handler } from '../types.js'

/** `GET /store/receipts/{ar_tx_id}` → the `Receipt` body; an unknown id is the catalogue's 404 `receipt_not_found`. */
export const getReceipt: Handler = async (ctx) => {
  const receipt = await ctx.services.batch.receipt(ctx.params.ar_tx_id as string)
  // a pending receipt gains its batch later; a committed one never changes
  return { status: 200, body: receipt, headers: { 'Cache-Control': receipt.batch ? 'public, max-age=86400' : 'no-store' } }
}
