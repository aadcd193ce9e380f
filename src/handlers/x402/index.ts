/**
 * x402 `batch-settlement` routes: a payer's refund and the operator's claim-now. The scheme itself is in
 * src/x402/batch/; cost calls pay with it through the cost meter (src/cost/CostPayments.ts).
 */
import type { OperationId } from '../../../generated/gateway/operationIds.js'
import type { Handler } from '../types.js'
import { claimBatchVouchers, refundBatchChannel } from './batchSettlementHandlers.js'

export const x402Handlers = {
  refundBatchChannel,
  claimBatchVouchers,
} satisfies Partial<Record<OperationId, Handler>>
