import type { BatchService } from '../../batch/createBatchService.js'
import { ReceiptNotFoundError } from '../../batch/errors.js'
import type { Receipt } from '../../../generated/gateway/types.gen.js'
import type { Handler } from '../types.js'

declare module '../types.js' {
  interface Services {
    /** The receipt batch (src/batch/createBatchService.ts). */
    batch: BatchService
  }
}

/** `GET /store/receipts/{ar_tx_id}` → the `Receipt` body; 404 `receipt_not_found` for an unknown id. */
export const getReceipt: Handler = async (ctx) => {
  try {
    const { receipt, onChain } = await ctx.services.batch.receipt(ctx.params.ar_tx_id as string)
    // where `attestLeaf` is called: null until the batch is committed (as `batch`)
    const where: Pick<Receipt, 'chain_id' | 'contract' | 'commit_tx'> = {
      chain_id: onChain?.chainId ?? null,
      contract: onChain?.contract ?? null,
      commit_tx: onChain?.commitTxHash ?? null,
    }
    const body = { ...receipt, ...where }
    // a pending receipt gains its batch later; a committed one never changes
    return { status: 200, body, headers: { 'Cache-Control': receipt.batch ? 'public, max-age=86400' : 'no-store' } }
  } catch (error) {
    if (error instanceof ReceiptNotFoundError) {
      return { status: 404, body: { error: error.code, message: error.shortMessage } }
    }
    throw error
  }
}
