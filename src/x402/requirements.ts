import { createHash } from 'node:crypto'
import { formatPriceUsd } from './price.js'
import type { ResourceInfo } from './paymentRequired.js'
import type { RailOffer } from './PaymentRail.js'

/** One element of `accepts` (seed 2.7), carrying both the v1 (`maxAmountRequired`) and v2 (`amount`) names. */
export type PaymentRequirement = {
  scheme: 'exact' | 'upto' | 'batch-settlement'
  network: string
  amount: string
  maxAmountRequired: string
  resource: string
  description: string
  mimeType: string
  payTo: string
  maxTimeoutSeconds: number
  asset: string
  extra: Record<string, unknown> | null
}

/** An upload as its requirements describe it. */
export type UploadInput = {
  resourceUrl: string
  sizeBytes: bigint
  sha256Hex: string
  mimeType: string
  priceAtomic: bigint
  priceUsd: string
  maxTimeoutSeconds?: number
}

export function describeUpload(sizeBytes: bigint): string {
  return `Permanent storage of ${sizeBytes} bytes on Arweave`
}

/** The text whose SHA-256 an Algorand payment carries as its note: `<resource_url>|<sha256_hex>|<size_bytes>|<price_usd>`. */
export function requestBindingText(resourceUrl: string, sha256Hex: string, sizeBytes: bigint, priceUsd: string): string {
  return `${resourceUrl}|${sha256Hex}|${sizeBytes}|${priceUsd}`
}

/** The raw 32-byte note an Algorand payment must carry for this request. */
export function requestBindingNote(resourceUrl: string, sha256Hex: string, sizeBytes: bigint, priceUsd: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(requestBindingText(resourceUrl, sha256Hex, sizeBytes, priceUsd)).digest())
}

/**
 * Every note accepted for this request: `<price_usd>` written as the service writes it (`formatPriceUsd`:
 * shortest decimal, at least one fractional digit — `0.005`, `1.0`), with exactly six decimals (`0.005000`),
 * or without a fractional part for whole dollars (`1`). All bind the same URL, digest, size and price.
 */
export function requestBindingNotes(resourceUrl: string, sha256Hex: string, sizeBytes: bigint, priceAtomic: bigint): Uint8Array[] {
  const canonical = formatPriceUsd(priceAtomic)
  const whole = priceAtomic / 1_000_000n
  const fixed6 = `${whole}.${(priceAtomic % 1_000_000n).toString().padStart(6, '0')}`
  const texts = new Set([canonical, fixed6])
  if (priceAtomic % 1_000_000n === 0n) texts.add(whole.toString())
  return [...texts].map((t) => requestBindingNote(resourceUrl, sha256Hex, sizeBytes, t))
}

/**
 * The one builder of a requirement (`accepts` element), used by every rail (EvmExactRail, AlgorandExactRail):
 * the offer's resource and price, the rail's network, receiver, asset and `extra`.
 */
export function exactRequirement(offer: RailOffer, on: { network: string; payTo: string; asset: string; extra: Record<string, unknown> | null }): PaymentRequirement {
  const amount = offer.priceAtomic.toString()
  return {
    scheme: 'exact',
    network: on.network,
    amount,
    maxAmountRequired: amount,
    resource: offer.resourceUrl,
    description: offer.description,
    mimeType: offer.mimeType || 'application/octet-stream',
    payTo: on.payTo,
    maxTimeoutSeconds: offer.maxTimeoutSeconds,
    asset: on.asset,
    extra: on.extra,
  }
}

/** The upload offer of `/store` for `sizeBytes` at `priceAtomic`. */
export function uploadOffer(input: Pick<UploadInput, 'resourceUrl' | 'sizeBytes' | 'mimeType' | 'priceAtomic' | 'maxTimeoutSeconds'>): RailOffer {
  return {
    resourceUrl: input.resourceUrl,
    description: describeUpload(input.sizeBytes),
    mimeType: input.mimeType || 'application/octet-stream',
    priceAtomic: input.priceAtomic,
    maxTimeoutSeconds: input.maxTimeoutSeconds ?? 60,
  }
}

/** The top-level v2 `resource` of a quote: the same URL, description and media type as each requirement. */
export function resourceInfo(input: Pick<UploadInput, 'resourceUrl' | 'sizeBytes' | 'mimeType'>): ResourceInfo {
  return { url: input.resourceUrl, description: describeUpload(input.sizeBytes), mimeType: input.mimeType || 'application/octet-stream' }
}
