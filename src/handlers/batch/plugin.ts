import { ReceiptNotFoundError } from '../../batch/errors.js'
import { batchErrorRows } from './errorRows.js'
import { receiptTools } from '../../mcp/tools/receiptTools.js'
import type { HttpPlugin } from '../HttpPlugin.js'
import { batchHandlers, initBatch } from './index.js'

/** The receipt batch: `GET /store/receipts/{ar_tx_id}` and the daily batch schedule. */
export const batchPlugin = {
  name: 'batch',
  create: initBatch,
  handlers: batchHandlers,
  errorRows: batchErrorRows,
  mcpTools: (ctx) => receiptTools((arTxId) => ctx.services.batch.receipt(arTxId)),
  notBuilt: { code: 'receipt_not_found', error: (ctx) => new ReceiptNotFoundError(ctx.params.ar_tx_id ?? '') },
} satisfies HttpPlugin
