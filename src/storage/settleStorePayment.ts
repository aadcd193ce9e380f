import type { Logger } from 'pino'
import {
  type AlgorandExactRail,
  type DecodedPaymentHeader,
  type EvmExactRail,
  type Facilitator,
  FacilitatorUnavailableError,
  type PaymentRequirement,
  PaymentReplayedError,
  type Price,
  requestBindingNotes,
  SettlementPendingError,
} from '../x402/index.js'
import { newDepositId } from './ids.js'
import type { Ledger, NewUpload } from './Ledger.js'
import type { ReceivedUpload } from './receiveUpload.js'

/** One paid upload to settle: the spooled upload row to create, what was paid for and at which prices. */
export type SettleInput = {
  upload: NewUpload
  file: Pick<ReceivedUpload, 'sha256' | 'sizeBytes'>
  /** The cheapest price honoured now (the requirement's amount). */
  price: Price
  /** Every price honoured now (the current one and held quotes). */
  prices: Price[]
  resourceUrl: string
  requirement: PaymentRequirement
  decoded: DecodedPaymentHeader
}
export type SettledDeposit = { depositId: string; payerTag: string; settlement: Record<string, unknown> }
export type SettleDeps = { ledger: Ledger; facilitator: Facilitator; logger?: Logger | undefined }

/**
 * Payment of one `/store` upload through its rail (seed 4.6 step 4), framework-free. Dispatches on the rail's
 * kind: an EVM authorization is claimed before the facilitator hears of it and settled; an Algorand
 * transaction is verified on the ledger, then claimed. Either way a replay — here or on a paid cost route, which
 * claim in the same `payment_claims` — finds the payment taken: 409.
 */
export function settleStorePayment(rail: EvmExactRail | AlgorandExactRail, input: SettleInput, deps: SettleDeps): Promise<SettledDeposit> {
  return rail.kind === 'evm' ? settleEvm(rail, input, deps) : settleAlgorand(rail, input, deps)
}

async function settleEvm(rail: EvmExactRail, { price, resourceUrl, requirement, decoded, upload }: SettleInput, { ledger, facilitator, logger }: SettleDeps): Promise<SettledDeposit> {
  const payload = decoded.payload
  const payment = rail.check(decoded, requirement)
  const depositId = newDepositId()
  // Claim the payment BEFORE the facilitator hears of it: concurrent replays, on any paid route, find it taken.
  const claimed = await ledger.claimWithUpload(
    {
      depositId,
      payer: payment.authorization.from,
      nonce: payment.authorization.nonce,
      payTo: requirement.payTo,
      network: requirement.network,
      asset: requirement.asset,
      scheme: 'exact',
      amountAtomic: payment.authorization.value,
      priceAtomic: price.atomic,
      priceUsd: price.usd,
      resourceUrl,
      paymentPayload: payload,
    },
    { ...upload, depositId, payerTag: payment.authorization.from },
    'pending_payment',
  )
  if (!claimed) throw new PaymentReplayedError()
  let settling = false
  try {
    const settled = await rail.verifyAndSettle(facilitator, decoded, requirement, payment, async () => {
      settling = true
    })
    const settlement = { ...settled.response, success: true, transaction: settled.transaction, network: settled.network, payer: settled.payer }
    const fresh = await ledger.markSettled(depositId, settled.transaction, settled.response)
    if (!fresh) logger?.warn({ deposit_id: depositId, tx_hash: settled.transaction }, 'settlement tx hash already recorded')
    await ledger.activateUpload(upload.uploadId)
    return { depositId, payerTag: payment.authorization.from, settlement }
  } catch (error) {
    if (settling && (error instanceof FacilitatorUnavailableError || error instanceof SettlementPendingError)) {
      // The settlement may or may not have happened (unreachable facilitator, or x402's `settlement_pending`
      // after its one retry): keep the claim (the payload can never be reused) and the spooled bytes, for
      // reconciliation from the chain.
      await ledger.markSettleUnknown(depositId, String(error))
    } else {
      await ledger.dropUnpaid(depositId, upload.uploadId)
    }
    throw error
  }
}

async function settleAlgorand(rail: AlgorandExactRail, { file, price, prices, resourceUrl, requirement, decoded, upload }: SettleInput, { ledger }: SettleDeps): Promise<SettledDeposit> {
  const payload = decoded.payload
  const paid = await rail.verify(decoded, {
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
  const depositId = newDepositId()
  // The transaction is final on the ledger: deposit (settled) and upload are recorded in one transaction.
  const claimed = await ledger.claimWithUpload(
    {
      depositId,
      payer: paid.payer,
      nonce: paid.txId,
      payTo: requirement.payTo,
      network: requirement.network,
      asset: paid.asset,
      scheme: 'exact',
      amountAtomic: paid.amount,
      priceAtomic: price.atomic,
      priceUsd: price.usd,
      resourceUrl,
      paymentPayload: payload,
      settled: { txHash: paid.txId, settlement },
    },
    { ...upload, depositId, payerTag: '' },
    'uploading',
  )
  if (!claimed) throw new PaymentReplayedError()
  return { depositId, payerTag: '', settlement }
}
