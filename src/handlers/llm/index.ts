/**
 * `/llm` keys, test and generate, the OpenAI-compatible `/llm/v1/*` and `/coreagent` (seed 000
 * §4.5). Error rows: `llmErrorRows` in `./errorRows.ts`.
 */
import type { OperationId } from '../../../generated/gateway/operationIds.js'
import type { Handler } from '../types.js'
import * as llm from './llmHandlers.js'
import * as modelCall from './modelCall.js'
import { initLlm as buildLlm } from '../../services/domains/llmDomain.js'
import { withSecurity } from '../withSecurity.js'
import { llmSecurity } from './llmSecurity.js'


/** The /llm domain of the service graph with its `llmBearer` scheme. */
export const initLlm = withSecurity(buildLlm, llmSecurity)

export const llmHandlers = { ...llm, ...modelCall } satisfies Partial<Record<OperationId, Handler>>
