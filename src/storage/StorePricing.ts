import type { BaseError } from '../shared/errors/BaseError.js'
import { PaymentRequiredError, type Price, renderPaymentRequired, type RailOffer, type RailRegistry, type RailRequirement, uploadOffer } from '../x402/index.js'
import type { X402Config } from '../x402/config.js'
import type { StorageConfig } from './config.js'
import { storeDiscoveryDocument, type X402DiscoveryDocument } from './discoveryDocument.js'
import { PayloadTooLargeError } from './errors.js'
import { type PriceHold, priceOf } from './PriceHold.js'
import type { StoreOutcome, StoreQuote } from './StorageService.js'
import { storeDiscoveryExtensions } from './storeDiscovery.js'
import type { UpstreamClient } from './UpstreamClient.js'
import type { UpstreamCredit } from './UpstreamCredit.js'

export type StorePricingOptions = {
  storage: StorageConfig
  x402: X402Config
  rails: RailRegistry
  upstream: UpstreamClient
  priceHold: PriceHold
  credit: UpstreamCredit
}

/**
 * Pricing and the 402 of `POST /store` (seed 4.6 steps 2–3), framework-free: the offer of an upload at a price,
 * its requirement on every registered rail, the 402 answer, `GET /store/quote` and `GET /.well-known/x402`.
 */
export class StorePricing {
  readonly #storage: StorageConfig
  readonly #x402: X402Config
  readonly #rails: RailRegistry
  readonly #upstream: UpstreamClient
  readonly #priceHold: PriceHold
  readonly #credit: UpstreamCredit

  constructor(o: StorePricingOptions) {
    this.#storage = o.storage
    this.#x402 = o.x402
    this.#rails = o.rails
    this.#upstream = o.upstream
    this.#priceHold = o.priceHold
    this.#credit = o.credit
  }

  /** Every rail's requirement of `offer`, in registration order. */
  accepts(offer: RailOffer): Promise<RailRequirement[]> {
    return this.#rails.requirements(offer)
  }

  /** What an upload of `sizeBytes` at `price` offers; `path` gives the resource URL. */
  offer(path: string, sizeBytes: bigint, mimeType: string, price: Price): RailOffer {
    return uploadOffer({ resourceUrl: `${this.#storage.publicOrigin}${path}`, sizeBytes, mimeType, priceAtomic: price.atomic, maxTimeoutSeconds: this.#x402.maxTimeoutSeconds })
  }

  /** Every 402 of the storage endpoint, to throw: the requirements at the current price and the reason (`message`: other words than the refusal's). */
  paymentRequired(offer: RailOffer, accepts: RailRequirement[], version: 1 | 2, refusal?: BaseError, extensions: Record<string, unknown> = storeDiscoveryExtensions, message?: string): PaymentRequiredError {
    return new PaymentRequiredError({
      version,
      resource: { url: offer.resourceUrl, description: offer.description, mimeType: offer.mimeType },
      accepts: accepts.map((a) => a.requirement),
      extensions,
      error: refusal?.code ?? null,
      message: message ?? refusal?.shortMessage,
    })
  }

  /**
   * `GET /store/quote`: what the 402 of an upload of `sizeBytes` would say — same formula, same
   * requirements — and until when that price is honoured (`SERVICE_STORAGE__QUOTE_VALIDITY_S`).
   */
  async quote(
    sizeBytes: bigint,
    { mimeType = 'application/octet-stream', version = 2, path = '/store' }: { mimeType?: string; version?: 1 | 2; path?: string } = {},
  ): Promise<{ body: StoreQuote; headers: Record<string, string> }> {
    if (sizeBytes > this.#storage.maxUploadBytes) throw new PayloadTooLargeError(this.#storage.maxUploadBytes)
    await this.#credit.assertCanCover(sizeBytes)
    const snapshot = await this.#upstream.pricing()
    const price = priceOf(snapshot, sizeBytes)
    const validUntil = this.#priceHold.quoted(snapshot)
    const offer = this.offer(path, sizeBytes, mimeType, price)
    const answer = renderPaymentRequired(this.paymentRequired(offer, await this.accepts(offer), version).body)
    const body: StoreQuote = {
      ...answer.body,
      quote: {
        size_bytes: Number(sizeBytes),
        amount: price.atomic.toString(),
        price_usd: price.usd,
        valid_until: Math.floor(validUntil / 1000),
        valid_for_s: this.#storage.quoteValiditySeconds,
      },
    }
    return { body, headers: answer.headers }
  }

  /** `GET /.well-known/x402`: the paid resources of this service, with their rails and price rule. */
  async discovery(): Promise<X402DiscoveryDocument> {
    const mib = priceOf(await this.#upstream.pricing(), 1_048_576n)
    const offer = this.offer('/store', 1_048_576n, 'application/octet-stream', mib)
    return storeDiscoveryDocument({
      origin: this.#storage.publicOrigin,
      accepts: (await this.accepts(offer)).map((a) => a.requirement),
      mibAmount: mib.atomic,
      quoteValiditySeconds: this.#storage.quoteValiditySeconds,
      extensions: storeDiscoveryExtensions,
    })
  }
}
