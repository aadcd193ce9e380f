import { llmErrorRows } from '../errorCatalogue.js'
import type { HttpPlugin } from '../HttpPlugin.js'
import { initLlm, llmHandlers } from './index.js'

/** `/llm` keys, the OpenAI- and Anthropic-compatible `/llm/v1` and `/coreagent`, with the `llmBearer` scheme. */
export const llmPlugin = {
  name: 'llm',
  create: initLlm,
  handlers: llmHandlers,
  errorRows: llmErrorRows,
} satisfies HttpPlugin
