/**
 * The Algorand rail's client side (`pay2store store`): no x402 client pays Algorand, so the CLI does
 * what the 402 asks itself. It sends the requirement's asset (the USDC ASA) to `payTo` with the request
 * binding as the note — SHA-256 of `<resource_url>|<sha256_hex>|<size_bytes>|<price_usd>`, the gateway's
 * own rule (src/x402/requirements.ts) — waits until the node confirms it, and returns the transaction id
 * the `PAYMENT-SIGNATURE` payload carries (`payload.txId`).
 */
import algosdk from 'algosdk'
import { formatPriceUsd } from '../../price.js'
import { requestBindingNote } from '../../requirements.js'
import { ClientPaymentError } from '../ClientRail.js'

export type AlgorandRequirement = { network: string; amount: string; asset: string; payTo: string; resource?: string }

export type AlgorandPayment = { txId: string; payer: string; confirmedRound: bigint }

/**
 * The node's refusals that mean the payer lacks the money, in algod's own wording: `underflow on
 * subtracting` (too little of the asset), `overspend` (too little ALGO for the fee), `balance … below min`
 * and `asset … missing from <payer>` (never opted in, so it holds none) — the last two only when they name
 * the payer, not the receiver.
 */
function lacksFunds(message: string, payer: string): boolean {
  if (/underflow on subtracting/.test(message)) return true
  return /overspend|below min|missing from/.test(message) && message.includes(payer)
}

/** The node could not be reached: the client says which node and what to start. */
function unreachable(url: string, error: unknown): ClientPaymentError {
  return new ClientPaymentError('unreachable', `cannot reach ${url}`, { url, hint: 'is the Algorand node running? `npm start` starts a local one (or pass --algod)', cause: error })
}

function status(error: unknown): number | undefined {
  const e = error as { status?: number; response?: { status?: number } }
  return e?.response?.status ?? e?.status
}

function nodeMessage(error: unknown): string {
  const e = error as { response?: { body?: { message?: string } }; message?: string }
  return e?.response?.body?.message ?? e?.message ?? String(error)
}

export async function payAlgorand(params: {
  algodUrl: string
  algodToken: string
  account: algosdk.Account
  requirement: AlgorandRequirement
  resourceUrl: string
  sha256Hex: string
  sizeBytes: number
  /** Rounds to wait for confirmation. */
  waitRounds?: number
}): Promise<AlgorandPayment> {
  const { requirement: req, account } = params
  if (!/^\d+$/.test(req.asset)) throw new ClientPaymentError('not_payable', `the Algorand requirement names asset ${req.asset}, not an ASA id`)
  const url = new URL(params.algodUrl)
  const algod = new algosdk.Algodv2(params.algodToken, `${url.protocol}//${url.hostname}`, url.port)
  const amount = BigInt(req.amount)
  const note = requestBindingNote(params.resourceUrl, params.sha256Hex, BigInt(params.sizeBytes), formatPriceUsd(amount))
  let suggestedParams
  try {
    suggestedParams = await algod.getTransactionParams().do()
  } catch (error) {
    if (status(error) === undefined) throw unreachable(params.algodUrl, error)
    throw new ClientPaymentError('node_error', `the Algorand node answered ${status(error)}: ${nodeMessage(error)}`, { code: 'algod_error' })
  }
  const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
    sender: account.addr,
    receiver: req.payTo,
    assetIndex: BigInt(req.asset),
    amount,
    note,
    suggestedParams,
  })
  let txId: string
  try {
    txId = (await algod.sendRawTransaction(txn.signTxn(account.sk)).do()).txid
  } catch (error) {
    if (status(error) === undefined) throw unreachable(params.algodUrl, error)
    const message = nodeMessage(error)
    if (lacksFunds(message, account.addr.toString())) {
      throw new ClientPaymentError('insufficient_funds', `the payer's balance does not cover the price (the Algorand node: ${message})`)
    }
    throw new ClientPaymentError('not_payable', `the Algorand node refused the payment: ${message}`)
  }
  try {
    const confirmed = await algosdk.waitForConfirmation(algod, txId, params.waitRounds ?? 20)
    return { txId, payer: account.addr.toString(), confirmedRound: confirmed.confirmedRound ?? 0n }
  } catch (error) {
    if (status(error) === undefined && !(error instanceof Error && /rounds/.test(error.message))) throw unreachable(params.algodUrl, error)
    throw new ClientPaymentError('not_payable', `payment ${txId} was not confirmed: ${nodeMessage(error)}`)
  }
}
