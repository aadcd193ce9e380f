import type { Logger } from 'pino'
import type { FacilitatorSettleResponse } from '../FacilitatorClient.js'
import type { Facilitator } from '../FacilitatorPool.js'
import type { DecodedPaymentHeader } from '../headers.js'
import type { Price } from '../price.js'
import type { PaymentRequirement } from '../requirements.js'
import type { PaymentWindow } from '../settlementWindow.js'

/**
 * What a paid resource offers, whatever the rail: its URL, what it is, and its price in micro-USD. A rail
 * turns it into its requirement (x402's `SchemeNetworkServer` builds `PaymentRequirements` the same way from
 * a price and a network it was registered for).
 */
export type RailOffer = {
  resourceUrl: string
  description: string
  mimeType: string
  priceAtomic: bigint
  maxTimeoutSeconds: number
}

/** What the paid route lends a rail's pre-check: the claim namespace, this client's permit, its limits. */
export type PrecheckContext = {
  /** 409 `payment_replayed` when any paid route holds this payment already. */
  assertUnclaimed(payer: string, nonce: string): Promise<void>
  /** Runs ledger reads for this client under its permit (429 beyond the per-address bound). */
  bounded<T>(work: () => Promise<T>): Promise<T>
  /** How long a payment the ledger does not know yet is looked for before it is refused (ms). */
  unknownPaymentMs: number
  /** How long a balance or nonce read is reused (ms). */
  cacheMs: number
}

/**
 * Whether a payment is believable before an upload gets a slot: `verified`, or not verifiable now (the ledger
 * could not be asked: the small pool only). An unbelievable payment is refused (thrown) instead. `release`
 * gives back what the check holds of the payer's funds.
 */
export type RailBelief = { verified: true; release: () => void } | { verified: false; why: string; release: () => void }

/** One paid upload's payment, as the route hands it to its rail: what is due and the payment offered. */
export type RailSettleInput = {
  decoded: DecodedPaymentHeader
  /** The requirement at the cheapest price honoured now. */
  requirement: PaymentRequirement
  price: Price
  /** Every price honoured now (the current one and held quotes). */
  prices: Price[]
  resourceUrl: string
  file: { sha256: string; sizeBytes: bigint }
}

/** The payment as the route records it: its claim key, what moved, and — for a payment already final — its settlement. */
export type DepositClaimInput = {
  payer: string
  nonce: string
  asset: string
  amountAtomic: bigint
  /** The payer as the stored item's tags name it ('' for none). */
  payerTag: string
  settled?: { txHash: string; settlement: Record<string, unknown> }
}

/**
 * The paid route's record of a payment, lent to the rail that settles it: `claim` takes the payment for this
 * upload (in one transaction with the deposit and upload rows; undefined when another route holds it), the
 * rest record what became of it.
 */
export type DepositBook = {
  claim(claim: DepositClaimInput): Promise<string | undefined>
  markSettled(depositId: string, txHash: string, response: unknown): Promise<boolean>
  markSettleUnknown(depositId: string, why: string): Promise<void>
  dropUnpaid(depositId: string): Promise<void>
  /** The payment settled: the upload may proceed. */
  activate(): Promise<void>
}

export type RailSettled = { depositId: string; payerTag: string; settlement: Record<string, unknown> }
export type SettleDeps = { facilitator: Facilitator; logger?: Logger | undefined }

/** A payment held by an `authorize-then-settle` rail until the call it pays for produced output. */
export type HeldPayment = {
  payer: string
  nonce: string
  amount: bigint
  /** Unix seconds after which it can no longer settle. */
  validBefore: bigint
}

/** The outcome of a held payment's settlement, as x402's facilitator `settle` answers it. */
export type HeldSettlement = FacilitatorSettleResponse

/**
 * One payment rail: a scheme on one network, registered once at start in the `RailRegistry` (x402's
 * `register(network, scheme)`). Callers never ask which chain it is on: every step of a paid route — the
 * requirement, the pre-check before an upload slot, the amount check once the size is known, the settlement, the
 * payer's form, the receipt currency, its node's health, its missing settings — is asked of the rail itself.
 */
/** What the chain says of a claimed payment an instance died settling (see `Rail.recoverClaim`). */
export type ClaimVerdict = { outcome: 'paid'; transaction: string; payer: string } | { outcome: 'never'; why: string } | { outcome: 'wait'; why: string }

export interface Rail {
  readonly scheme: 'exact'
  /** A person's name for it (`USDC on Base`). */
  readonly label: string
  /**
   * `authorize-then-settle`: a payment can be verified, held and settled later or released (cost calls settle
   * once they produced output; `authorize` and `settleHeld` exist); `final`: paid once seen on the ledger.
   */
  readonly settlement: 'authorize-then-settle' | 'final'
  /** The CAIP-2 network (one resolved from a node is known once the node answered). */
  network(): Promise<string>
  /** Environment settings it needs and lacks (empty: ready). */
  missingSettings(): string[]
  requirement(offer: RailOffer): Promise<PaymentRequirement>
  /** The receipt leaf's currency code of a payment it recorded in `asset`; undefined when it has none. */
  currencyCode(asset: string): number | undefined
  /** The payer as the claim namespace compares it (EVM addresses lower-cased; others as written). */
  normalisePayer(payer: string): string
  /** Whether its ledger node answers (readiness); absent: nothing to ask. */
  readonly health?: { name: string; check(timeoutMs: number): Promise<void> }
  /** The believable-payment check before an upload slot, with the requirement at the least any upload costs. */
  precheck(decoded: DecodedPaymentHeader, requirement: PaymentRequirement, ctx: PrecheckContext): Promise<RailBelief>
  /** The amount against the size's price, before anything is spooled: throws the refusal (402). */
  checkAmount(decoded: DecodedPaymentHeader, requirement: PaymentRequirement): void
  /** Pays one upload: claims, settles and records the payment through `book`. */
  settle(input: RailSettleInput, book: DepositBook, deps: SettleDeps): Promise<RailSettled>
  /** The CAIP-2 network when known without asking a node (authorize-then-settle rails always know it). */
  readonly id?: string
  /** True when `recoverClaim` can read the ledger (its settings are there). */
  readonly canRecover?: boolean
  /**
   * What the ledger says of a payment claimed for an upload whose settlement nobody recorded (the instance
   * died between settling and recording); undefined: the stored payload is not one this rail can check.
   */
  recoverClaim?(claim: { paymentPayloadJson: string; asset: string; payTo: string; amount: bigint }): Promise<ClaimVerdict | undefined>
  /** `authorize-then-settle` rails: the same requirement synchronously, for cost calls. */
  requirementOf?(offer: RailOffer): PaymentRequirement
  /** The local checks of a payment held until a call ran (`window`: the call plus its settlement). */
  authorize?(decoded: DecodedPaymentHeader, requirement: PaymentRequirement, nowSeconds: number, window?: PaymentWindow): HeldPayment
  /** Asks whoever verifies it (a facilitator, or the rail itself) whether the held payment is good. */
  verifyHeld?(facilitator: Facilitator, decoded: DecodedPaymentHeader, requirement: PaymentRequirement, payment: HeldPayment): Promise<{ isValid: boolean; invalidReason?: string; invalidMessage?: string }>
  /** Settles a held payment (x402's pending settlement retried once). */
  settleHeld?(facilitator: Facilitator, decoded: DecodedPaymentHeader, requirement: PaymentRequirement, payment: HeldPayment): Promise<HeldSettlement>
}

/** A rail whose payments can be held while a call runs and settled after it (cost calls). */
export type DeferrableRail = Rail & Required<Pick<Rail, 'id' | 'requirementOf' | 'authorize' | 'verifyHeld' | 'settleHeld'>>

export function isDeferrable(rail: Rail): rail is DeferrableRail {
  return rail.settlement === 'authorize-then-settle' && rail.id !== undefined && rail.requirementOf !== undefined && rail.authorize !== undefined && rail.verifyHeld !== undefined && rail.settleHeld !== undefined
}
