import type { McpTool } from '../McpTool.js'
import { okResult } from '../toolResults.js'

/** The receipt batch's tool: `get_receipt`, what `GET /store/receipts/{ar_tx_id}` answers. */
export function receiptTools(receipt: (arTxId: string) => Promise<unknown>): McpTool[] {
  return [{ name: 'get_receipt', call: async (call) => okResult((await receipt(String(call.arguments.ar_tx_id))) as Record<string, unknown>) }]
}
