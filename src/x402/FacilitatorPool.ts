import { FacilitatorUnavailableError } from './errors.js'
import type { FacilitatorClient, FacilitatorSettleResponse, FacilitatorVerifyResponse } from './FacilitatorClient.js'
import type { PaymentPayload } from './headers.js'

/** What the payment rails need of a facilitator: the two calls of seed 4.6 step 4. */
export type Facilitator = {
  verify(paymentPayload: PaymentPayload, paymentRequirements: unknown, x402Version?: 1 | 2): Promise<FacilitatorVerifyResponse>
  settle(paymentPayload: PaymentPayload, paymentRequirements: unknown, x402Version?: 1 | 2): Promise<FacilitatorSettleResponse>
}

export type FacilitatorPoolOptions = {
  /** In order of preference: the primary, then the fallbacks. */
  clients: FacilitatorClient[]
  /** Told each time a call moves on to the next facilitator. */
  onFailover?: (info: { step: 'verify' | 'settle'; from: string; to: string; error: FacilitatorUnavailableError }) => void
}

/**
 * An ordered list of facilitators (seed: `{facilitator_url}`, `{fallback_facilitator_url}`).
 *
 * - `verify` has no effect anywhere, so any transport failure (refused, timed out, a reply without a
 *   verdict) moves to the next facilitator.
 * - `settle` moves on only when the request provably never reached the facilitator (connection refused,
 *   unknown host, unreachable network — `FacilitatorUnavailableError.beforeSend`). A timeout or a garbled
 *   reply after the request went out may hide a settlement, so it is thrown as is: the caller records the
 *   outcome as unknown and never settles the same payload anywhere else. One payload is settled at most once.
 * - A verdict (valid or not, success or not) is final: the next facilitator is not asked.
 */
export class FacilitatorPool implements Facilitator {
  readonly #clients: FacilitatorClient[]
  readonly #onFailover: FacilitatorPoolOptions['onFailover']

  constructor({ clients, onFailover }: FacilitatorPoolOptions) {
    if (clients.length === 0) throw new RangeError('at least one facilitator is needed')
    this.#clients = clients
    this.#onFailover = onFailover
  }

  get urls(): string[] {
    return this.#clients.map((c) => c.url)
  }

  get clients(): readonly FacilitatorClient[] {
    return this.#clients
  }

  verify(paymentPayload: PaymentPayload, paymentRequirements: unknown, x402Version: 1 | 2 = 2): Promise<FacilitatorVerifyResponse> {
    return this.#inOrder('verify', (c) => c.verify(paymentPayload, paymentRequirements, x402Version), () => true)
  }

  settle(paymentPayload: PaymentPayload, paymentRequirements: unknown, x402Version: 1 | 2 = 2): Promise<FacilitatorSettleResponse> {
    return this.#inOrder('settle', (c) => c.settle(paymentPayload, paymentRequirements, x402Version), (e) => e.beforeSend)
  }

  async #inOrder<T>(step: 'verify' | 'settle', call: (c: FacilitatorClient) => Promise<T>, mayMoveOn: (e: FacilitatorUnavailableError) => boolean): Promise<T> {
    for (let i = 0; ; i++) {
      const client = this.#clients[i] as FacilitatorClient
      try {
        return await call(client)
      } catch (error) {
        const next = this.#clients[i + 1]
        if (!(error instanceof FacilitatorUnavailableError) || !next || !mayMoveOn(error)) throw error
        this.#onFailover?.({ step, from: client.url, to: next.url, error })
      }
    }
  }
}
