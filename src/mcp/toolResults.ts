import type { CallToolResult } from '@modelcontextprotocol/server'

/** `_meta` key of the payment a client sends (x402 `specs/transports-v2/mcp.md`). */
export const META_PAYMENT = 'x402/payment'
/** `_meta` key of the settlement a paid result carries. */
export const META_PAYMENT_RESPONSE = 'x402/payment-response'

const text = (value: unknown) => JSON.stringify(value)

/** A tool's answer: the structured result, and the same JSON as text for clients that read only `content`. */
export function okResult(structured: Record<string, unknown>, settlement?: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: 'text', text: text(structured) }],
    structuredContent: structured,
    ...(settlement ? { _meta: { [META_PAYMENT_RESPONSE]: settlement } } : {}),
  }
}

/**
 * Payment required (or a payment refused, `error` saying why) per x402's MCP transport: `isError`, the
 * `PaymentRequired` body as `structuredContent`, and in `content[0].text` the `x402/error` wrapper
 * (`{code: 402, message, data}`) that clients without structured content read.
 */
export function paymentRequiredResult(paymentRequired: Record<string, unknown>): CallToolResult {
  const message = typeof paymentRequired.message === 'string' ? paymentRequired.message : typeof paymentRequired.error === 'string' ? paymentRequired.error : 'payment required'
  return {
    isError: true,
    structuredContent: paymentRequired,
    content: [{ type: 'text', text: text({ 'x402/error': { code: 402, message, data: paymentRequired } }) }],
  }
}

/** Any other refusal: the `Error` body the HTTP route would answer (`{error, message, details?}`). */
export function errorResult(body: { error: string; message: string; details?: Record<string, unknown> }): CallToolResult {
  return { isError: true, structuredContent: body, content: [{ type: 'text', text: text(body) }] }
}
