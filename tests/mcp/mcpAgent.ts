/**
 * An agent as the MCP tests play it: the MCP SDK's own client over Streamable HTTP, and x402's MCP transport read from
 * its results (a payment requirement is an `isError` result carrying `PaymentRequired` in `structuredContent` and
 * in the `x402/error` wrapper; the payment goes in `_meta["x402/payment"]`). Shared by the in-process test
 * (tests/mcp/mcp.integration.test.ts) and the one against `npm start` (tests/system/).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { PaymentRequired } from '@x402/core/types'
import { expect } from 'vitest'
import { type PayableChain, payingClient } from '../storage/harness.js'

/** Connected to `<gatewayUrl>/mcp`, optionally with a session token or `/llm` key in `headers`. */
export async function mcpAgent(gatewayUrl: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/mcp`), { requestInit: { headers } }))
  await client.listTools() // the client checks structured results against the listed output schemas from now on
  return client
}

/** Calls a tool, with an x402 payment payload in `_meta["x402/payment"]` when given. */
export const callTool = (client: Client, name: string, args: Record<string, unknown>, payment?: unknown) =>
  client.callTool({ name, arguments: args, ...(payment ? { _meta: { 'x402/payment': payment } } : {}) }) as Promise<CallToolResult>

export const structured = (r: CallToolResult) => r.structuredContent as Record<string, unknown>

/** The x402 MCP payment-required result: isError, PaymentRequired in structuredContent and in the x402/error wrapper. */
export function requirementOf(r: CallToolResult): PaymentRequired {
  expect(r.isError).toBe(true)
  const required = structured(r) as unknown as PaymentRequired
  expect(required.x402Version).toBe(2)
  const wrapped = JSON.parse((r.content[0] as { text: string }).text) as { 'x402/error': { code: number; data: unknown } }
  expect(wrapped['x402/error'].code).toBe(402)
  expect(wrapped['x402/error'].data).toEqual(required)
  return required
}

export const base64 = (data: Uint8Array) => Buffer.from(data).toString('base64')

/**
 * The requirement of storing `data` through `store_file`, and a stock `@x402/core` + `@x402/evm` (exact) client's
 * payload for it on `chain` from Anvil account `payerIndex` (optionally signed for another amount: an attacker's).
 */
export async function storeFilePayment(client: Client, chain: PayableChain, payerIndex: number, data: Uint8Array, amount?: (a: bigint) => bigint) {
  const required = requirementOf(await callTool(client, 'store_file', { data_base64: base64(data) }))
  const x402 = payingClient(chain, payerIndex)
  const accepts = amount ? required.accepts.map((a) => ({ ...a, amount: amount(BigInt(a.amount)).toString() })) : required.accepts
  const payload = await x402.createPaymentPayload({ ...required, accepts })
  return { required, payload, header: x402.encodePaymentSignatureHeader(payload), price: BigInt(required.accepts.find((a) => a.network === chain.network)!.amount) }
}

/** Polls `verify_upload` until the upload is `verified` or `timeoutMs` passed; returns the last status. */
export async function untilVerified(client: Client, uploadId: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const state = String(structured(await callTool(client, 'verify_upload', { upload_id: uploadId })).status)
    if (state === 'verified' || Date.now() > deadline) return state
    await new Promise((r) => setTimeout(r, 300))
  }
}
