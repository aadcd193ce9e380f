/**
 * Receipt-batch handlers (issue 7): `GET /store/receipts/{ar_tx_id}`, plus the daily batch schedule
 * started by `initBatch`. Error rows for `../errorCatalogue.ts`: `batchErrorRows`.
 */
import type { OperationId } from '../../../generated/gateway/operationIds.js'
import type { DomainInit, Handler } from '../types.js'
import { getReceipt } from './batchHandlers.js'
import { batchInit } from './batchInit.js'

export { batchErrorRows } from './batchErrorRows.js'

export const batchHandlers = {
  getReceipt,
} satisfies Partial<Record<OperationId, Handler>>

export const initBatch: DomainInit = batchInit
