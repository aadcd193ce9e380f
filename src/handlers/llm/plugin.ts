import { llmErrorRows } from './errorRows.js'
import type { HttpPlugin } from '../HttpPlugin.js'
import { initLlm } from '../../services/domains/llmDomain.js'
import { llmHandlers } from './index.js'
import { llmMcpTools } from './mcpTools.js'
import { llmSecurity } from './llmSecurity.js'

/** `/llm` keys, the OpenAI- and Anthropic-compatible `/llm/v1` and `/coreagent`, with the `llmBearer` scheme. */
export const llmPlugin = {
  name: 'llm',
  create: initLlm,
  security: llmSecurity,
  handlers: llmHandlers,
  errorRows: llmErrorRows,
  mcpTools: llmMcpTools,
} satisfies HttpPlugin
