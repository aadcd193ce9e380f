import type algosdk from 'algosdk'
import { type AlgorandPaymentCheck, type AlgorandSettlement, parseAlgorandPayment, verifyAlgorandPayment } from './algorandRail.js'
import type { DecodedPaymentHeader } from '../../headers.js'
import { type AlgoUsdRate, nativeAlgoAmount } from './nativeAlgoAmount.js'
import type { PaymentRailBase, RailOffer } from '../../PaymentRail.js'
import { ALGORAND_NETWORK } from '../../networks.js'
import { algorandExtra, exactRequirement, type PaymentRequirement } from '../../requirements.js'

export type AlgorandExactRailOptions = {
  algod: algosdk.Algodv2
  /** `algorand:<genesis_hash>`, resolved once (from the settings or the node). */
  network: () => Promise<string>
  payTo: string
  assetId?: bigint
  /** Native ALGO counts only at this operator-set price; undefined: refused. */
  algoUsdRate?: AlgoUsdRate
  pollIntervalMs: number
  timeoutMs: number
}

/** USDC (ASA 31566704) or native ALGO at the operator's rate, on Algorand: paid once the transaction is confirmed. */
export class AlgorandExactRail implements PaymentRailBase {
  readonly kind = 'algorand' as const
  readonly scheme = 'exact' as const
  readonly settlement = 'final' as const
  readonly label = ALGORAND_NETWORK.label
  readonly options: AlgorandExactRailOptions

  constructor(options: AlgorandExactRailOptions) {
    this.options = options
  }

  network(): Promise<string> {
    return this.options.network()
  }

  get assetId(): bigint {
    return this.options.assetId ?? ALGORAND_NETWORK.usdcAssetId
  }

  missingSettings(): string[] {
    return this.options.payTo ? [] : ['SERVICE_X402__PAY_TO_ALGORAND']
  }

  async requirement(offer: RailOffer): Promise<PaymentRequirement> {
    const extra = algorandExtra(offer.priceAtomic, this.options.algoUsdRate)
    return exactRequirement(offer, { network: await this.network(), payTo: this.options.payTo, asset: this.assetId.toString(), extra })
  }

  currencyCode(asset: string): number | undefined {
    if (asset === this.assetId.toString()) return ALGORAND_NETWORK.currency.usdc
    if (asset === 'ALGO' || asset === '0') return ALGORAND_NETWORK.currency.algo
    return undefined
  }

  /**
   * Waits for the transaction to be confirmed and checks it: asset (or native ALGO at the rate), receiver,
   * amount at least `minAmount`, and a note among `expectedNotes`.
   */
  async verify(decoded: Pick<DecodedPaymentHeader, 'payload'>, check: Pick<AlgorandPaymentCheck, 'payTo' | 'minAmount' | 'expectedNotes'>): Promise<AlgorandSettlement> {
    const { txId } = parseAlgorandPayment(decoded.payload)
    const rate = this.options.algoUsdRate
    return verifyAlgorandPayment(this.options.algod, {
      ...check,
      txId,
      assetId: this.assetId,
      nativeMinAmount: rate ? nativeAlgoAmount(check.minAmount, rate) : undefined,
      pollIntervalMs: this.options.pollIntervalMs,
      timeoutMs: this.options.timeoutMs,
    })
  }
}
