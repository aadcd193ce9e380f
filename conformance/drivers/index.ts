/** The drivers (row vocabularies) of the conformance runner, by the name a machine file gives in `driver`. */
import type { Driver } from '../runner.js'
import { batchSettlementDriver } from './batchSettlement.js'
import { httpDriver } from './http.js'
import { mcpPaymentDriver } from './mcpPayment.js'
import { paidStorageDriver } from './paidStorage.js'
import { pullProgressDriver } from './pullProgress.js'
import { shadowDriver } from './shadow.js'

export const drivers: Record<string, Driver> = Object.assign(Object.create(null) as Record<string, Driver>, {
  http: httpDriver,
  shadow: shadowDriver,
  'paid-storage': paidStorageDriver,
  'pull-progress': pullProgressDriver,
  'mcp-payment': mcpPaymentDriver,
  'batch-settlement': batchSettlementDriver,
})
