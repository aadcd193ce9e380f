import { FacilitatorUnavailableError } from './errors.js'
import type { PaymentPayload } from './headers.js'
import { X402_VERSION } from './reasons.js'

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

/** The two facilitator calls of seed 4.6 step 4, as x402 v2 shapes with the bearer token. */
export class FacilitatorClient {
  readonly #url: string
  readonly #token: string
  readonly #timeoutMs: number
  readonly #fetch: typeof fetch

  constructor({ url, token, timeoutMs = 60_000, fetch: f = fetch }: FacilitatorClientOptions) {
    this.#url = url.replace(/\/+$/, '')
    this.#token = token
    this.#timeoutMs = timeoutMs
    this.#fetch = f
  }

  verify(paymentPayload: PaymentPayload, paymentRequirements: unknown): Promise<FacilitatorVerifyResponse> {
    return this.#post('verify', paymentPayload, paymentRequirements) as Promise<FacilitatorVerifyResponse>
  }

  settle(paymentPayload: PaymentPayload, paymentRequirements: unknown): Promise<FacilitatorSettleResponse> {
    return this.#post('settle', paymentPayload, paymentRequirements) as Promise<FacilitatorSettleResponse>
  }

  async #post(step: 'verify' | 'settle', paymentPayload: PaymentPayload, paymentRequirements: unknown): Promise<unknown> {
    let response: Response
    try {
      response = await this.#fetch(`${this.#url}/${step}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.#token}` },
        body: JSON.stringify({ x402Version: X402_VERSION, paymentPayload, paymentRequirements }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      })
    } catch (cause) {
      throw new FacilitatorUnavailableError(step, cause)
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
