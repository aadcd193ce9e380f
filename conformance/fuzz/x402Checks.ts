/**
 * x402 version 2's payment headers, checked wherever a response carries them: `PAYMENT-REQUIRED` is base64 of a
 * `PaymentRequired` (x402's own schema, `@x402/core/schemas`; version 1's for the answer to a v1 client) and,
 * when the body is JSON, the same object as the body's fields of that name (a quote's body adds its `quote`);
 * `PAYMENT-RESPONSE` is base64 of a `SettleResponse` (success, transaction, CAIP-2 network, payer…), whose
 * `success` is true on a 2xx. Version 1's `X-PAYMENT-RESPONSE` answers a v1 client and is left to its own tests.
 */
import { PaymentRequiredV1Schema, PaymentRequiredV2Schema, z } from '@x402/core/schemas'
import type { CheckResult } from './checks.js'
import type { ResponseSeen } from './responseChecks.js'

const SettleResponseSchema = z.object({
  success: z.boolean(),
  errorReason: z.string().optional(),
  errorMessage: z.string().optional(),
  payer: z.string().optional(),
  transaction: z.string(),
  network: z.string().regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,64}$/, 'a CAIP-2 network id'),
  amount: z.string().regex(/^\d+$/).optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
  extensionResponses: z.record(z.string(), z.unknown()).optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
})

function decode(value: string): { value?: unknown; problem?: string } {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value.trim())) return { problem: 'is not base64' }
  try {
    return { value: JSON.parse(Buffer.from(value.trim(), 'base64').toString('utf8')) as unknown }
  } catch {
    return { problem: 'is not base64 of JSON' }
  }
}

const issues = (error: z.ZodError) => error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')

export function x402HeaderChecks(r: Pick<ResponseSeen, 'status' | 'headers' | 'text'>): CheckResult[] {
  const results: CheckResult[] = []
  const required = r.headers.get('payment-required')
  if (required !== null) {
    const decoded = decode(required)
    let problem = decoded.problem ? `PAYMENT-REQUIRED ${decoded.problem}` : undefined
    const version = (decoded.value as { x402Version?: unknown } | undefined)?.x402Version
    if (!problem) {
      const parsed = (version === 1 ? PaymentRequiredV1Schema : PaymentRequiredV2Schema).safeParse(decoded.value)
      if (!parsed.success) problem = `PAYMENT-REQUIRED is not an x402 v${version === 1 ? 1 : 2} PaymentRequired: ${issues(parsed.error)}`
    }
    if (!problem && r.text.trim().startsWith('{')) {
      try {
        const body = JSON.parse(r.text) as Record<string, unknown>
        const header = decoded.value as Record<string, unknown>
        const differ = Object.keys(header).filter((k) => JSON.stringify(body[k]) !== JSON.stringify(header[k]))
        if (body.x402Version !== undefined && differ.length) problem = `PAYMENT-REQUIRED differs from the JSON body in ${differ.join(', ')}`
      } catch {
        // the body check reports a JSON body that does not parse
      }
    }
    results.push({ check: 'x402_payment_required', problem })
  }
  const settled = r.headers.get('payment-response')
  if (settled !== null) {
    const decoded = decode(settled)
    let problem = decoded.problem ? `PAYMENT-RESPONSE ${decoded.problem}` : undefined
    if (!problem) {
      const parsed = SettleResponseSchema.safeParse(decoded.value)
      if (!parsed.success) problem = `PAYMENT-RESPONSE is not an x402 v2 SettleResponse: ${issues(parsed.error)}`
      else if (r.status < 300 && !parsed.data.success) problem = `PAYMENT-RESPONSE says success false on a ${r.status}`
    }
    results.push({ check: 'x402_payment_response', problem })
  }
  return results
}
