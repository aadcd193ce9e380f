import type { PaymentRequirement } from '../x402/requirements.js'
import { isOfferedToV1, v1NetworkName } from '../x402/v1Networks.js'

export type DiscoveryAccept = Pick<PaymentRequirement, 'scheme' | 'network' | 'asset' | 'payTo' | 'maxTimeoutSeconds' | 'extra'>

/** `X402Discovery` of the document (`GET /.well-known/x402`). */
export type X402DiscoveryDocument = {
  version: 1
  x402Version: 2
  resources: string[]
  instructions: string
  items: {
    resource: string
    type: 'http'
    method: string
    x402Versions: (1 | 2)[]
    v1Networks: string[]
    description: string
    mimeType: string
    accepts: DiscoveryAccept[]
    price: {
      unit: 'byte'
      currency: 'USD'
      decimals: 6
      formula: string
      minimum_amount: string
      quote_url: string
      quote_validity_s: number
      example: { size_bytes: number; amount: string }
    }
    extensions: Record<string, unknown>
  }[]
}

export type StoreDiscoveryInput = {
  origin: string
  /** The requirements of any size (amount-bearing fields are dropped). */
  accepts: PaymentRequirement[]
  /** The amount of a 1 MiB upload at today's rates. */
  mibAmount: bigint
  quoteValiditySeconds: number
  extensions: Record<string, unknown>
}

/**
 * The discovery document of this service: its one paid resource, `POST /store`, with the ways to pay it
 * and its price rule. The x402scan layout (`version`, `resources`) with an `items` list in the shape of the
 * Bazaar discovery API's items (`resource`, `type`, `x402Version(s)`, `accepts`, …).
 */
export function storeDiscoveryDocument(input: StoreDiscoveryInput): X402DiscoveryDocument {
  const resource = `${input.origin}/store`
  const accepts = input.accepts.map(({ scheme, network, asset, payTo, maxTimeoutSeconds, extra }) => ({ scheme, network, asset, payTo, maxTimeoutSeconds, extra }))
  return {
    version: 1,
    x402Version: 2,
    resources: [resource],
    instructions:
      'POST /store with a multipart form whose `file` field holds the bytes; the 402 names the price. ' +
      'Price a size first with GET /store/quote?bytes=N. x402 v1 clients: POST /store?x402Version=1.',
    items: [
      {
        resource,
        type: 'http',
        method: 'POST',
        x402Versions: [1, 2],
        v1Networks: input.accepts.filter((a) => isOfferedToV1(a.network)).map((a) => v1NetworkName(a.network) as string),
        description: 'Permanent storage on Arweave, priced per byte',
        mimeType: 'application/json',
        accepts,
        price: {
          unit: 'byte',
          currency: 'USD',
          decimals: 6,
          formula: 'round(upstream_cost_usd × 1.25 + 0.005, 6); upstream_cost_usd = upstream price of 1 MiB × fiat rate ÷ 1,048,576 × size',
          minimum_amount: '5000',
          quote_url: `${input.origin}/store/quote?bytes={bytes}`,
          quote_validity_s: input.quoteValiditySeconds,
          example: { size_bytes: 1_048_576, amount: input.mibAmount.toString() },
        },
        extensions: input.extensions,
      },
    ],
  }
}
