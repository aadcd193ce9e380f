import type { FacilitatorClient } from '@x402/core/server'
import type { PaymentPayload as CorePaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse } from '@x402/core/types'
import type { FacilitatorClient as OurFacilitatorClient } from '../FacilitatorClient.js'
import type { Facilitator } from '../FacilitatorPool.js'
import type { PaymentPayload } from '../headers.js'

/**
 * The gateway's facilitator pool (bearer token, fallbacks, a settle never sent twice) as the `FacilitatorClient`
 * of @x402/core, so that @x402/evm's `batch-settlement` server scheme and channel manager verify and settle
 * through the same facilitators, with the same rules, as every other rail.
 */
export function facilitatorClientOf(pool: Facilitator, supported: OurFacilitatorClient | undefined): FacilitatorClient {
  return {
    verify: (payload: CorePaymentPayload, requirements: PaymentRequirements) =>
      pool.verify(payload as unknown as PaymentPayload, requirements, 2) as Promise<VerifyResponse>,
    settle: (payload: CorePaymentPayload, requirements: PaymentRequirements) =>
      pool.settle(payload as unknown as PaymentPayload, requirements, 2) as Promise<SettleResponse>,
    getSupported: async () => {
      if (!supported) return { kinds: [], extensions: [], signers: {} }
      return (await supported.supported()) as SupportedResponse
    },
  }
}
