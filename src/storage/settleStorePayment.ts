import type { Logger } from 'pino'
import type { DecodedPaymentHeader, Facilitator, PaymentRequirement, Price } from '../x402/index.js'
import type { DepositBook, Rail, RailSettled } from '../x402/rails/Rail.js'
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
export type SettledDeposit = RailSettled
export type SettleDeps = { ledger: Ledger; facilitator: Facilitator; logger?: Logger | undefined }

/**
 * Payment of one `/store` upload through its rail (seed 4.6 step 4), framework-free. The rail decides the
 * order (an authorization is claimed before the facilitator hears of it; a transaction already final is
 * verified on its ledger, then claimed); this module lends it the ledger's records of the deposit and upload.
 * Either way a replay — here or on a paid cost route, which claim in the same `payment_claims` — finds the
 * payment taken: 409.
 */
export function settleStorePayment(rail: Rail, input: SettleInput, deps: SettleDeps): Promise<SettledDeposit> {
  return rail.settle(input, depositBook(input, deps.ledger), { facilitator: deps.facilitator, logger: deps.logger })
}

function depositBook({ upload, price, resourceUrl, requirement, decoded }: SettleInput, ledger: Ledger): DepositBook {
  return {
    claim: async (c) => {
      const depositId = newDepositId()
      const claimed = await ledger.claimWithUpload(
        {
          depositId,
          payer: c.payer,
          nonce: c.nonce,
          payTo: requirement.payTo,
          network: requirement.network,
          asset: c.asset,
          scheme: 'exact',
          amountAtomic: c.amountAtomic,
          priceAtomic: price.atomic,
          priceUsd: price.usd,
          resourceUrl,
          paymentPayload: decoded.payload,
          ...(c.settled ? { settled: c.settled } : {}),
        },
        { ...upload, depositId, payerTag: c.payerTag },
        c.settled ? 'uploading' : 'pending_payment',
      )
      return claimed ? depositId : undefined
    },
    markSettled: (depositId, txHash, response) => ledger.markSettled(depositId, txHash, response),
    markSettleUnknown: (depositId, why) => ledger.markSettleUnknown(depositId, why),
    dropUnpaid: (depositId) => ledger.dropUnpaid(depositId, upload.uploadId),
    activate: () => ledger.activateUpload(upload.uploadId),
  }
}
