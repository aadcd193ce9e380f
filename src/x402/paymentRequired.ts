import { encodeBase64Json } from './headers.js'
import { HEADER_PAYMENT_REQUIRED } from './reasons.js'
import type { PaymentRequirement } from './requirements.js'
import { isOfferedToV1, v1NetworkName } from './v1Networks.js'

/** x402 v2 `ResourceInfo`: what is being paid for. */
export type ResourceInfo = { url: string; description: string; mimeType: string }

/**
 * The 402 body. The seed's fields (`x402Version`, `accepts`, `error`) always; version 2 adds the top-level
 * `resource` and `extensions` of the x402 v2 specification. `message` says in words why the 402 came
 * (designed; clients that do not know it ignore it).
 */
export type PaymentRequired = {
  x402Version: 1 | 2
  /** Why: null on a first quote (v2), else a catalogued code such as `insufficient_amount`. */
  error: string | null
  message?: string
  resource?: ResourceInfo
  accepts: PaymentRequirement[]
  extensions?: Record<string, unknown>
}

export type PaymentRequiredInput = {
  /** The protocol version the client speaks (default 2). */
  version?: 1 | 2
  resource: ResourceInfo
  /** The requirements in v2 terms (CAIP-2 networks); converted for v1. */
  accepts: PaymentRequirement[]
  /** null (or omitted) on a first quote; the reason code on a refusal. */
  error?: string | null
  message?: string
  /** v2 `extensions` (e.g. the Bazaar discovery declaration). */
  extensions?: Record<string, unknown>
}

/** The message a v1 client gets when nothing went wrong but no payment came (v1 `error` is a string). */
const V1_NO_PAYMENT = 'X-PAYMENT header is required'

/**
 * Builds the 402 body for the version the client speaks. v2: every requirement, `resource`, `extensions`.
 * v1: only the requirements on networks stock v1 clients know, renamed (`eip155:8453` → `base`), with
 * `error` always a string (the v1 schema has no null) and no v2-only top-level fields.
 */
export function buildPaymentRequired(input: PaymentRequiredInput): PaymentRequired {
  const error = input.error ?? null
  const message = input.message
  if (input.version === 1) {
    const accepts = input.accepts
      .filter((r) => isOfferedToV1(r.network))
      .map((r) => ({ ...r, network: v1NetworkName(r.network) as string }))
    return { x402Version: 1, error: error ?? V1_NO_PAYMENT, ...(message ? { message } : {}), accepts }
  }
  return {
    x402Version: 2,
    error,
    ...(message ? { message } : {}),
    resource: input.resource,
    accepts: input.accepts,
    extensions: input.extensions ?? {},
  }
}

/** A 402 answer: status, body and `PAYMENT-REQUIRED` (base64 of the same body), framework-free. */
export type PaymentRequiredAnswer = { status: 402; body: PaymentRequired; headers: Record<string, string> }

/**
 * The 402 answer of `input`, as the error catalogue renders a thrown `PaymentRequiredError`: the body plus
 * `PAYMENT-REQUIRED` carrying the same JSON, so a client can retry from any 402 alone.
 */
export function paymentRequiredAnswer(input: PaymentRequiredInput): PaymentRequiredAnswer {
  return renderPaymentRequired(buildPaymentRequired(input))
}

/** The one writer of a 402's wire form: the body plus `PAYMENT-REQUIRED` carrying the same JSON (base64). */
export function renderPaymentRequired<B extends PaymentRequired>(body: B): { status: 402; body: B; headers: Record<string, string> } {
  return { status: 402, body, headers: { [HEADER_PAYMENT_REQUIRED]: encodeBase64Json(body) } }
}
