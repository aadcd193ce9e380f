import { PaymentHeaderInvalidError } from './errors.js'
import { HEADER_PAYMENT_SIGNATURE, HEADER_X_PAYMENT } from './reasons.js'
import { caip2Network } from './v1Networks.js'

/** A decoded payment payload. Only the fields every rail needs are typed; the rest is kept as sent. */
export type PaymentPayload = {
  x402Version: number
  accepted: Record<string, unknown> & { network: string; scheme?: string }
  payload: Record<string, unknown>
  resource?: unknown
  extensions?: unknown
  [key: string]: unknown
}

export type DecodedPaymentHeader = {
  header: string
  /** CAIP-2 network (a v1 name such as `base` is translated). */
  network: string
  /** 1 or 2, as the payer announced. */
  version: 1 | 2
  /** Normalised: `accepted` present, `accepted.network` CAIP-2. */
  payload: PaymentPayload
  /** The decoded JSON exactly as sent (what a v1 facilitator is given). */
  raw: Record<string, unknown>
}

type HeaderBag = Record<string, string | string[] | undefined>

function headerValue(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name.toLowerCase()] ?? headers[name]
  if (Array.isArray(v)) return v[0]
  return v
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/

export function encodeBase64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)), 'utf8').toString('base64')
}

export function decodeBase64Json(text: string, what: string): unknown {
  const trimmed = text.trim()
  if (trimmed === '') throw new PaymentHeaderInvalidError(`${what} is empty`)
  if (!BASE64.test(trimmed)) throw new PaymentHeaderInvalidError(`${what} is not base64`)
  const json = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8')
  try {
    return JSON.parse(json)
  } catch {
    throw new PaymentHeaderInvalidError(`${what} is not base64 of JSON`)
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Reads `PAYMENT-SIGNATURE` (wins) or `X-PAYMENT`. Returns null when neither is present.
 * A v1 payload (`network` at the top level, no `accepted`) is accepted and normalised; its v1 network name
 * becomes the CAIP-2 id (`base` → `eip155:8453`).
 */
export function decodePaymentHeader(headers: HeaderBag): DecodedPaymentHeader | null {
  const primary = headerValue(headers, HEADER_PAYMENT_SIGNATURE)
  const alias = headerValue(headers, HEADER_X_PAYMENT)
  const header = primary !== undefined ? HEADER_PAYMENT_SIGNATURE : alias !== undefined ? HEADER_X_PAYMENT : undefined
  const raw = primary ?? alias
  if (header === undefined || raw === undefined) return null
  const decoded = decodeBase64Json(raw, header)
  if (!isObject(decoded)) throw new PaymentHeaderInvalidError(`${header} must encode a JSON object`)
  const version = decoded.x402Version
  if (version !== 1 && version !== 2) throw new PaymentHeaderInvalidError('x402Version must be 1 or 2')
  if (!isObject(decoded.payload)) throw new PaymentHeaderInvalidError('missing field payload (object)')
  let accepted = decoded.accepted
  if (accepted === undefined && typeof decoded.network === 'string') {
    accepted = { scheme: decoded.scheme, network: decoded.network }
  }
  if (!isObject(accepted)) throw new PaymentHeaderInvalidError('missing field accepted (object)')
  if (typeof accepted.network !== 'string' || accepted.network === '') {
    throw new PaymentHeaderInvalidError('missing field accepted.network (string)')
  }
  const network = caip2Network(accepted.network)
  // One network per payment: the rail is chosen and pre-checked from `accepted.network`, so a top-level
  // `network` (v1) or `scheme` that says otherwise is refused rather than let through to the facilitator.
  if (decoded.network !== undefined && (typeof decoded.network !== 'string' || caip2Network(decoded.network) !== network)) {
    throw new PaymentHeaderInvalidError(`network ${JSON.stringify(decoded.network)} differs from accepted.network ${JSON.stringify(accepted.network)}`)
  }
  if (decoded.scheme !== undefined && accepted.scheme !== undefined && decoded.scheme !== accepted.scheme) {
    throw new PaymentHeaderInvalidError(`scheme ${JSON.stringify(decoded.scheme)} differs from accepted.scheme ${JSON.stringify(accepted.scheme)}`)
  }
  const payload = { ...decoded, accepted: { ...accepted, network } } as PaymentPayload
  return { header, network, version, payload, raw: decoded }
}
