import algosdk from 'algosdk'
import { withDeadline } from '../../../shared/withDeadline.js'
import { algorandSignatureVerdict } from './algorandSignature.js'
import type { BriefCache } from '../../BriefCache.js'
import { ExpiredPaymentError, InvalidPaymentError, LedgerNodeUnavailableError } from '../../errors.js'
import { InvalidPaymentReasons } from '../../reasons.js'

export type AlgorandPrecheck = {
  txId: string
  payTo: string
  pollIntervalMs: number
  /** How long a transaction the node does not know is looked for (`SERVICE_STORAGE__ALGORAND_UNKNOWN_TX_MS`). */
  unknownTxMs: number
  /** The ASA paid in (USDC), and the least any upload costs in it (its fixed fee). */
  assetId: bigint
  minAmount: bigint
  /** The micro-ALGO of that least price at the operator's rate; undefined: native ALGO is refused. */
  nativeMinAmount: bigint | undefined
  /** Account reads of the node, kept briefly (keyed by address and asset). */
  holdings: BriefCache<bigint | undefined>
}

/** What the pre-check found: the sender, and whether its payment could be verified (else: the small pool). */
export type AlgorandBelief = { sender: string; verified: boolean; why?: string }

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const httpStatus = (error: unknown): number | undefined => {
  const e = error as { status?: number; response?: { status?: number } }
  return e?.response?.status ?? e?.status
}

/**
 * The Algorand rail's pre-check, before the body is read: the node must know `txId` (pending or confirmed) as
 * a payment or asset transfer to `payTo`, in the asset asked for and of at least the least an upload costs, and
 * its signature must verify here (`algorandSignatureVerdict`). A transaction still pending must be able to
 * confirm: its validity window open, the sender holding the amount (and, for ALGO, its minimum balance and
 * fee). A made-up id is given up after `unknownTxMs` — 402 `expired_payment` — instead of holding an upload
 * slot through the 30 s of confirmation polling. What needs the body (the amount against the size's price, the
 * note binding its hash) is checked after it. Account reads that fail leave the payer unverified (small pool).
 */
export async function precheckAlgorandPayment(algod: algosdk.Algodv2, check: AlgorandPrecheck): Promise<AlgorandBelief> {
  const info = await lookUp(algod, check)
  if (info.poolError) throw new InvalidPaymentError(InvalidPaymentReasons.rejectedByLedger, `transaction rejected by the node: ${info.poolError}`)
  const txn = info.txn.txn
  const transfer = txn.type === algosdk.TransactionType.axfer ? txn.assetTransfer : undefined
  const payment = txn.type === algosdk.TransactionType.pay ? txn.payment : undefined
  const receiver = transfer?.receiver.toString() ?? payment?.receiver.toString()
  if (receiver === undefined) throw new InvalidPaymentError(InvalidPaymentReasons.wrongTransactionType, `transaction type ${txn.type} is not a payment or asset transfer`)
  if (receiver !== check.payTo) throw new InvalidPaymentError(InvalidPaymentReasons.receiverMismatch, `receiver must be ${check.payTo}`)
  if (transfer && transfer.assetIndex !== check.assetId) throw new InvalidPaymentError(InvalidPaymentReasons.assetMismatch, `asset ${transfer.assetIndex} is not accepted; pay asset ${check.assetId}`)
  if (payment && check.nativeMinAmount === undefined) {
    throw new InvalidPaymentError(InvalidPaymentReasons.nativeAlgoNotAccepted, `native ALGO is not accepted (no ALGO/USD rate is configured); pay asset ${check.assetId}`)
  }
  const amount = transfer?.amount ?? payment?.amount ?? 0n
  const least = transfer ? check.minAmount : (check.nativeMinAmount ?? 0n)
  if (amount < least) throw new InvalidPaymentError(InvalidPaymentReasons.amountInsufficient, `amount ${amount} is below the least any upload costs, ${least}`)
  const sender = txn.sender.toString()
  const signature = algorandSignatureVerdict(info.txn)
  if (signature === 'invalid') throw new InvalidPaymentError(InvalidPaymentReasons.invalidSignature, 'the transaction is not signed by its sender (or its auth address)')
  if (info.confirmedRound !== undefined && info.confirmedRound > 0n) {
    // final on the ledger: the money moved (amount and note are checked once the body is read)
    return signature === 'valid' ? { sender, verified: true } : { sender, verified: false, why: 'a logic signature cannot be checked here' }
  }
  try {
    const round = (await withDeadline(algod.status().do(), 5_000, 'algod')).lastRound
    if (txn.lastValid <= round) throw new ExpiredPaymentError(check.txId, 0, `its validity ended at round ${txn.lastValid}: it can never confirm`)
    // signed by another key than the sender's: only valid if the sender's account is rekeyed to it
    const authorizer = info.txn.sgnr
    if (authorizer && !authorizer.equals(txn.sender)) {
      const account = await withDeadline(algod.accountInformation(sender).do(), 5_000, 'algod')
      if (!account.authAddr?.equals(authorizer)) throw new InvalidPaymentError(InvalidPaymentReasons.invalidSignature, `the transaction is signed by ${authorizer}, which is not the sender's auth address`)
    }
    const need = transfer ? amount : amount + txn.fee
    const held = await check.holdings.get(`${sender}|${transfer ? check.assetId : 'algo'}`, () => holding(algod, sender, transfer ? check.assetId : undefined))
    if (held === undefined || held < need) {
      throw new InvalidPaymentError(InvalidPaymentReasons.insufficientFunds, `the sender holds ${held ?? 'none'} of ${transfer ? `asset ${check.assetId}` : 'spendable micro-ALGO'}, below the ${need} this transaction moves`)
    }
    if (transfer && (await check.holdings.get(`${check.payTo}|${check.assetId}`, () => holding(algod, check.payTo, check.assetId))) === undefined) {
      throw new InvalidPaymentError(InvalidPaymentReasons.rejectedByLedger, `${check.payTo} is not opted in to asset ${check.assetId}: the transfer cannot confirm`)
    }
  } catch (error) {
    if (error instanceof InvalidPaymentError || error instanceof ExpiredPaymentError) throw error
    return { sender, verified: false, why: `the node did not answer: ${String(error).slice(0, 200)}` }
  }
  return signature === 'valid' ? { sender, verified: true } : { sender, verified: false, why: 'a logic signature cannot be checked here' }
}

/** Polls for the transaction until it is known, for at most `unknownTxMs`. */
async function lookUp(algod: algosdk.Algodv2, check: AlgorandPrecheck): Promise<algosdk.modelsv2.PendingTransactionResponse> {
  const deadline = Date.now() + check.unknownTxMs
  let unreachable: unknown
  for (;;) {
    try {
      return await withDeadline(algod.pendingTransactionInformation(check.txId).do(), Math.max(check.pollIntervalMs, 5_000), 'algod')
    } catch (error) {
      const status = httpStatus(error)
      unreachable = status === undefined || status >= 500 ? error : undefined
    }
    if (Date.now() + check.pollIntervalMs > deadline) break
    await sleep(check.pollIntervalMs)
  }
  if (unreachable !== undefined) throw new LedgerNodeUnavailableError(unreachable)
  throw new ExpiredPaymentError(check.txId, Math.round(check.unknownTxMs / 1000))
}

/**
 * What `address` holds that it can spend: units of `assetId` (undefined when not opted in), or — no asset —
 * micro-ALGO above its minimum balance.
 */
async function holding(algod: algosdk.Algodv2, address: string, assetId: bigint | undefined): Promise<bigint | undefined> {
  if (assetId === undefined) {
    const account = await withDeadline(algod.accountInformation(address).do(), 5_000, 'algod')
    return account.amount - account.minBalance
  }
  try {
    const held = await withDeadline(algod.accountAssetInformation(address, assetId).do(), 5_000, 'algod')
    return held.assetHolding?.amount
  } catch (error) {
    if (httpStatus(error) === 404) return undefined
    throw error
  }
}
