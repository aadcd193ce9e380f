import { ReceiptNotFoundError } from '../../batch/errors.js'
import { batchErrorRows } from './errorRows.js'
import type { HttpPlugin } from '../HttpPlugin.js'
import { batchHandlers, initBatch } from './index.js'

/** The receipt batch: `GET /store/receipts/{ar_tx_id}` and the daily batch schedule. */
export const batchPlugin = {
  name: 'batch',
  create: initBatch,
  handlers: batchHandlers,
  errorRows: batchErrorRows,
  notBuilt: { code: 'receipt_not_found', error: (ctx) => new ReceiptNotFoundError(ctx.params.ar_tx_id ?? '') },
} satisfies HttpPlugin
