import { FacilitatorUnavailableError } from './errors.js'
import type { PaymentPayload } from './headers.js'

export type FacilitatorVerifyResponse = { isValid: boolean; invalidReason?: string; invalidMessage?: string; payer?: string }
export type FacilitatorSettleResponse = {
  success: boolean
  errorReason?: string
  errorMessage?: string
  payer?: string
  transaction: string
  network: string
  [key: string]: unknown
}

export type FacilitatorClientOptions = { url: string; token: string; timeoutMs?: number; fetch?: typeof fetch }

/** Error codes of a connection that was never made: the request cannot have reached the facilitator. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])

function notSent(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return true
    const nested = (e as { errors?: unknown[] }).errors // AggregateError of a dual-stack connect
    if (Array.isArray(nested) && nested.length > 0 && nested.every((n) => notSent(n))) return true
  }
  return false
}

/**
 * One facilitator: `/verify`, `/settle` (seed 4.6 step 4) with the bearer token, and `/supported`. The body
 * is `{x402Version, paymentPayload, paymentRequirements}` with the version the payer paid in (2, or 1 for a
 * v1 payload on a v1 network name).
 */
export class FacilitatorClient {
  readonly url: string
  readonly #token: string
  readonly #timeoutMs: number
  readonly #fetch: typeof fetch

  constructor({ url, token, timeoutMs = 60_000, fetch: f = fetch }: FacilitatorClientOptions) {
    this.url = url.replace(/\/+$/, '')
    this.#token = token
    this.#timeoutMs = timeoutMs
    this.#fetch = f
  }

  verify(paymentPayload: PaymentPayload, paymentRequirements: unknown, x402Version: 1 | 2 = 2): Promise<FacilitatorVerifyResponse> {
    return this.#post('verify', x402Version, paymentPayload, paymentRequirements) as Promise<FacilitatorVerifyResponse>
  }

  settle(paymentPayload: PaymentPayload, paymentRequirements: unknown, x402Version: 1 | 2 = 2): Promise<FacilitatorSettleResponse> {
    return this.#post('settle', x402Version, paymentPayload, paymentRequirements) as Promise<FacilitatorSettleResponse>
  }

  /** `GET /supported` (health): the kinds the facilitator settles. Throws when unreachable or not 200. */
  async supported(timeoutMs = 2_000): Promise<{ kinds: unknown[] }> {
    const response = await this.#fetch(`${this.url}/supported`, {
      headers: { authorization: `Bearer ${this.#token}` },
      signal: AbortSignal.timeout(timeoutMs),
    })
    if (response.status !== 200) throw new Error(`facilitator /supported answered HTTP ${response.status}`)
    const body = (await response.json()) as { kinds?: unknown }
    if (!Array.isArray(body.kinds)) throw new Error('facilitator /supported carries no kinds')
    return { kinds: body.kinds }
  }

  async #post(step: 'verify' | 'settle', x402Version: 1 | 2, paymentPayload: PaymentPayload, paymentRequirements: unknown): Promise<unknown> {
    let response: Response
    try {
      response = await this.#fetch(`${this.url}/${step}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.#token}` },
        body: JSON.stringify({ x402Version, paymentPayload, paymentRequirements }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
    } catch (cause) {
      throw new FacilitatorUnavailableError(step, cause, { beforeSend: notSent(cause) })
    }
    const text = await response.text().catch(() => '')
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new FacilitatorUnavailableError(step, new Error(`HTTP ${response.status}: non-JSON reply`))
    }
    // A 4xx that still carries the verdict (isValid/success false) is a verdict; anything else is an outage.
    const verdictKey = step === 'verify' ? 'isValid' : 'success'
    if (typeof body === 'object' && body !== null && typeof (body as Record<string, unknown>)[verdictKey] === 'boolean') {
      return body
    }
    throw new FacilitatorUnavailableError(step, new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`))
  }
}
