import type { OperationId } from '../../../generated/gateway/operationIds.js'
import type { Handler } from '../types.js'
import { mcpCall } from './mcpCall.js'

export const mcpHandlers = { mcpCall } satisfies Partial<Record<OperationId, Handler>>
