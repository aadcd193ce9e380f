/**
 * Receipt-batch handlers: `GET /store/receipts/{ar_tx_id}`, plus the daily batch schedule
 * started by `initBatch` (src/services/domains/batchDomain.ts; the plug-in is ./plugin.ts). Error rows: `batchErrorRows` in `./errorRows.ts`.
 */
import type { OperationId } from '../../../generated/gateway/operationIds.js'
import type { Handler } from '../types.js'
import { getReceipt } from './batchHandlers.js'

export { initBatch } from '../../services/domains/batchDomain.js'

export const batchHandlers = {
  getReceipt,
} satisfies Partial<Record<OperationId, Handler>>
