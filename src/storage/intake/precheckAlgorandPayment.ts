import algosdk from 'algosdk'
import { withDeadline } from '../../shared/withDeadline.js'
import { ExpiredPaymentError, InvalidPaymentError, LedgerNodeUnavailableError } from '../../x402/errors.js'
import { InvalidPaymentReasons } from '../../x402/reasons.js'

export type AlgorandPrecheck = {
  txId: string
  payTo: string
  pollIntervalMs: number
  /** How long a transaction the node does not know is looked for (`SERVICE_STORAGE__ALGORAND_UNKNOWN_TX_MS`). */
  unknownTxMs: number
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const httpStatus = (error: unknown): number | undefined => {
  const e = error as { status?: number; response?: { status?: number } }
  return e?.response?.status ?? e?.status
}

/**
 * The Algorand rail's pre-check, before the body is read (issue 26): the node must know `txId` (pending or
 * confirmed) as a payment or asset transfer to `payTo`. A made-up id is given up after `unknownTxMs` —
 * 402 `expired_payment` — instead of holding an upload slot and a spooled body through the 30 s of
 * confirmation polling. What needs the body (amount against the size's price, the note binding its hash)
 * is checked after it, by the full verification.
 */
export async function precheckAlgorandPayment(algod: algosdk.Algodv2, check: AlgorandPrecheck): Promise<void> {
  const deadline = Date.now() + check.unknownTxMs
  let unreachable: unknown
  for (;;) {
    let info: algosdk.modelsv2.PendingTransactionResponse | undefined
    try {
      info = await withDeadline(algod.pendingTransactionInformation(check.txId).do(), Math.max(check.pollIntervalMs, 5_000), 'algod')
      unreachable = undefined
    } catch (error) {
      const status = httpStatus(error)
      unreachable = status === undefined || status >= 500 ? error : undefined
    }
    if (info) {
      if (info.poolError) throw new InvalidPaymentError(InvalidPaymentReasons.rejectedByLedger, `transaction rejected by the node: ${info.poolError}`)
      const txn = info.txn.txn
      const receiver =
        txn.type === algosdk.TransactionType.axfer && txn.assetTransfer
          ? txn.assetTransfer.receiver.toString()
          : txn.type === algosdk.TransactionType.pay && txn.payment
            ? txn.payment.receiver.toString()
            : undefined
      if (receiver === undefined) throw new InvalidPaymentError(InvalidPaymentReasons.wrongTransactionType, `transaction type ${txn.type} is not a payment or asset transfer`)
      if (receiver !== check.payTo) throw new InvalidPaymentError(InvalidPaymentReasons.receiverMismatch, `receiver must be ${check.payTo}`)
      return
    }
    if (Date.now() + check.pollIntervalMs > deadline) break
    await sleep(check.pollIntervalMs)
  }
  if (unreachable !== undefined) throw new LedgerNodeUnavailableError(unreachable)
  throw new ExpiredPaymentError(check.txId, Math.round(check.unknownTxMs / 1000))
}
