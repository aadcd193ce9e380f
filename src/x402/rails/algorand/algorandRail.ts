import algosdk from 'algosdk'
import { withDeadline } from '../../../shared/withDeadline.js'
import { ExpiredPaymentError, InvalidPaymentError, LedgerNodeUnavailableError, PaymentHeaderInvalidError, RequestHashMismatchError } from '../../errors.js'
import type { PaymentPayload } from '../../headers.js'
import { ALGORAND_USDC_ASSET_ID, InvalidPaymentReasons } from '../../reasons.js'

export type AlgorandPaymentCheck = {
  txId: string
  payTo: string
  minAmount: bigint
  /** Raw 32-byte SHA-256 values the note may equal (the request binding; see `requestBindingNotes`). */
  expectedNotes: Uint8Array[]
  assetId?: bigint
  /** The micro-ALGO a native payment must reach (the price at the operator's rate); undefined: native refused. */
  nativeMinAmount?: bigint
  pollIntervalMs?: number
  timeoutMs?: number
}

export type AlgorandSettlement = {
  txId: string
  payer: string
  amount: bigint
  /** `31566704` (the ASA) or `ALGO` for a native payment. */
  asset: string
  confirmedRound: bigint
}

/** `payload.txId`: the id of an already submitted transaction (52 base32 characters). */
export function parseAlgorandPayment(payload: PaymentPayload): { txId: string } {
  const txId = payload.payload.txId
  if (typeof txId !== 'string' || txId === '') throw new PaymentHeaderInvalidError('missing field payload.txId (string)')
  if (!/^[A-Z2-7]{52}$/.test(txId)) throw new PaymentHeaderInvalidError('payload.txId is not an Algorand transaction id')
  return { txId }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function httpStatus(error: unknown): number | undefined {
  const e = error as { status?: number; response?: { status?: number } }
  return e?.response?.status ?? e?.status
}

/**
 * Seed 4.6 step 4, Algorand: poll the node until the transaction is confirmed (every 1.5 s, up to 30 s by
 * default), then check asset, receiver, amount and note binding.
 */
export async function verifyAlgorandPayment(algod: algosdk.Algodv2, check: AlgorandPaymentCheck): Promise<AlgorandSettlement> {
  const interval = check.pollIntervalMs ?? 1_500
  const timeout = check.timeoutMs ?? 30_000
  const assetId = check.assetId ?? ALGORAND_USDC_ASSET_ID
  const deadline = Date.now() + timeout
  let lastUnreachable: unknown
  for (;;) {
    let info: algosdk.modelsv2.PendingTransactionResponse | undefined
    try {
      // each poll is bounded too: a node that accepts the connection and never answers is unreachable
      info = await withDeadline(algod.pendingTransactionInformation(check.txId).do(), Math.max(interval, 5_000), 'algod')
      lastUnreachable = undefined
    } catch (error) {
      const status = httpStatus(error)
      if (status === undefined || status >= 500) lastUnreachable = error
      else lastUnreachable = undefined // 404: not (yet) known to the node
    }
    if (info) {
      if (info.poolError) {
        throw new InvalidPaymentError(InvalidPaymentReasons.rejectedByLedger, `transaction rejected by the node: ${info.poolError}`)
      }
      if (info.confirmedRound !== undefined && info.confirmedRound > 0n) return checkConfirmed(info, check, assetId)
    }
    if (Date.now() + interval > deadline) break
    await sleep(interval)
  }
  if (lastUnreachable !== undefined) throw new LedgerNodeUnavailableError(lastUnreachable)
  throw new ExpiredPaymentError(check.txId, Math.round(timeout / 1000))
}

export function checkConfirmed(info: algosdk.modelsv2.PendingTransactionResponse, check: AlgorandPaymentCheck, assetId: bigint): AlgorandSettlement {
  const txn = info.txn.txn
  let receiver: string
  let amount: bigint
  let asset: string
  let minAmount = check.minAmount
  if (txn.type === algosdk.TransactionType.axfer && txn.assetTransfer) {
    if (txn.assetTransfer.assetIndex !== assetId) {
      throw new InvalidPaymentError(
        InvalidPaymentReasons.assetMismatch,
        `asset ${txn.assetTransfer.assetIndex} is not accepted; pay asset ${assetId}${check.nativeMinAmount === undefined ? '' : ' or native ALGO'}`,
      )
    }
    receiver = txn.assetTransfer.receiver.toString()
    amount = txn.assetTransfer.amount
    asset = assetId.toString()
  } else if (txn.type === algosdk.TransactionType.pay && txn.payment) {
    // micro-ALGO are not micro-USD: a native payment counts only at the operator's rate
    if (check.nativeMinAmount === undefined) {
      throw new InvalidPaymentError(InvalidPaymentReasons.nativeAlgoNotAccepted, `native ALGO is not accepted (no ALGO/USD rate is configured); pay asset ${assetId}`)
    }
    receiver = txn.payment.receiver.toString()
    amount = txn.payment.amount
    asset = 'ALGO'
    minAmount = check.nativeMinAmount
  } else {
    throw new InvalidPaymentError(InvalidPaymentReasons.wrongTransactionType, `transaction type ${txn.type} is not a payment or asset transfer`)
  }
  if (receiver !== check.payTo) {
    throw new InvalidPaymentError(InvalidPaymentReasons.receiverMismatch, `receiver must be ${check.payTo}`)
  }
  if (amount < minAmount) {
    throw new InvalidPaymentError(InvalidPaymentReasons.amountInsufficient, `amount ${amount}${asset === 'ALGO' ? ' micro-ALGO' : ''} is below the price ${minAmount}`)
  }
  const note = txn.note ?? new Uint8Array()
  if (!check.expectedNotes.some((n) => Buffer.from(note).equals(Buffer.from(n)))) throw new RequestHashMismatchError()
  return { txId: check.txId, payer: txn.sender.toString(), amount, asset, confirmedRound: info.confirmedRound ?? 0n }
}
