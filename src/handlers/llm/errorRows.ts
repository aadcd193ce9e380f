import type { ErrorRows } from '../errorCatalogue.js'

/** `/llm` keys and `/coreagent` (src/llm). */
export const llmErrorRows = {
  llm_key_not_found: { status: 404 },
  // the meter (src/cost/meter): a generation past what the call's payment pays for, or past its settlement time
  generation_budget_spent: { status: 402 },
  payment_expires_too_soon: { status: 402 },
} as const satisfies ErrorRows
