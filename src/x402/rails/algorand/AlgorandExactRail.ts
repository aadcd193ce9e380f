import type algosdk from 'algosdk'
import { type AlgorandPaymentCheck, type AlgorandSettlement, parseAlgorandPayment, verifyAlgorandPayment } from './algorandRail.js'
import type { DecodedPaymentHeader } from '../../headers.js'
import { type AlgoUsdRate, nativeAlgoAmount } from './nativeAlgoAmount.js'
import { withDeadline } from '../../../shared/withDeadline.js'
import { BriefCache } from '../../BriefCache.js'
import { PaymentReplayedError } from '../../errors.js'
import type { DepositBook, PrecheckContext, Rail, RailBelief, RailOffer, RailSettled, RailSettleInput } from '../Rail.js'
import { precheckAlgorandPayment } from './precheckAlgorandPayment.js'
import { ALGORAND_NETWORK } from '../../networks.js'
import { exactRequirement, type PaymentRequirement, requestBindingNotes } from '../../requirements.js'
import { algorandExtra } from './algorandExtra.js'

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
export class AlgorandExactRail implements Rail {
  readonly scheme = 'exact' as const
  readonly settlement = 'final' as const
  readonly label = ALGORAND_NETWORK.label
  readonly options: AlgorandExactRailOptions
  #holdings: BriefCache<bigint | undefined> | undefined
  readonly health = {
    name: 'algod',
    check: async (timeoutMs: number) => {
      await withDeadline(this.options.algod.status().do(), timeoutMs, 'algod')
    },
  }

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

  /** An Algorand address or transaction id is kept as written. */
  normalisePayer(payer: string): string {
    return payer
  }

  /**
   * Before an upload slot (under this client's permit): the node knows the transaction, to our address, in our
   * asset, signed, able to confirm (`precheckAlgorandPayment`); then the payment is not used here already.
   */
  async precheck(decoded: DecodedPaymentHeader, requirement: PaymentRequirement, ctx: PrecheckContext): Promise<RailBelief> {
    const { txId } = parseAlgorandPayment(decoded.payload)
    const least = BigInt(requirement.amount)
    const rate = this.options.algoUsdRate
    this.#holdings ??= new BriefCache(ctx.cacheMs)
    const holdings = this.#holdings
    const belief = await ctx.bounded(() =>
      precheckAlgorandPayment(this.options.algod, {
        txId,
        payTo: requirement.payTo,
        pollIntervalMs: this.options.pollIntervalMs,
        unknownTxMs: ctx.unknownPaymentMs,
        assetId: this.assetId,
        minAmount: least,
        nativeMinAmount: rate ? nativeAlgoAmount(least, rate) : undefined,
        holdings,
      }),
    )
    await ctx.assertUnclaimed(belief.sender, txId)
    const release = () => {}
    return belief.verified ? { verified: true, release } : { verified: false, why: belief.why ?? '', release }
  }

  /** The amount is checked on the confirmed transaction (`settle`): nothing to check before the bytes are kept. */
  checkAmount(): void {}

  /** The transaction is final on the ledger once confirmed: verified, then deposit (settled) and upload recorded in one transaction. */
  async settle({ file, price, prices, resourceUrl, requirement, decoded }: RailSettleInput, book: DepositBook): Promise<RailSettled> {
    const paid = await this.verify(decoded, {
      payTo: requirement.payTo,
      minAmount: price.atomic,
      // the note binds the price it was paid at: any price honoured now
      expectedNotes: prices.flatMap((p) => requestBindingNotes(resourceUrl, file.sha256, file.sizeBytes, p.atomic)),
    })
    const settlement = {
      success: true,
      transaction: paid.txId,
      network: requirement.network,
      payer: paid.payer,
      asset: paid.asset,
      amount: paid.amount.toString(),
      confirmedRound: paid.confirmedRound.toString(),
    }
    const depositId = await book.claim({ payer: paid.payer, nonce: paid.txId, asset: paid.asset, amountAtomic: paid.amount, payerTag: '', settled: { txHash: paid.txId, settlement } })
    if (depositId === undefined) throw new PaymentReplayedError()
    return { depositId, payerTag: '', settlement }
  }
}
