/**
 * The Algorand rail of `pay2store store` (seed 4.6 step 4): no x402 client pays Algorand, so the CLI does
 * what the 402 asks itself. It sends the requirement's asset (the USDC ASA) to `payTo` with the request
 * binding as the note — SHA-256 of `<resource_url>|<sha256_hex>|<size_bytes>|<price_usd>`, the gateway's
 * own rule (src/x402/requirements.ts) — waits until the node confirms it, and returns the transaction id
 * the `PAYMENT-SIGNATURE` payload carries (`payload.txId`).
 */
import algosdk from 'algosdk'
import { formatPriceUsd } from '../x402/price.js'
import { requestBindingNote } from '../x402/requirements.js'
import { CliError, EXIT, unreachable } from './CliError.js'

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
  if (!/^\d+$/.test(req.asset)) throw new CliError('not_payable', `the Algorand requirement names asset ${req.asset}, not an ASA id`, EXIT.notPayable)
  const url = new URL(params.algodUrl)
  const algod = new algosdk.Algodv2(params.algodToken, `${url.protocol}//${url.hostname}`, url.port)
  const amount = BigInt(req.amount)
  const note = requestBindingNote(params.resourceUrl, params.sha256Hex, BigInt(params.sizeBytes), formatPriceUsd(amount))
  let suggestedParams
  try {
    suggestedParams = await algod.getTransactionParams().do()
  } catch (error) {
    if (status(error) === undefined) throw unreachable(params.algodUrl, error, 'algod')
    throw new CliError('algod_error', `the Algorand node answered ${status(error)}: ${nodeMessage(error)}`, EXIT.server)
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
    if (status(error) === undefined) throw unreachable(params.algodUrl, error, 'algod')
    const message = nodeMessage(error)
    if (lacksFunds(message, account.addr.toString())) {
      throw new CliError('insufficient_funds', `the payer's balance does not cover the price (the Algorand node: ${message})`, EXIT.insufficientFunds)
    }
    throw new CliError('not_payable', `the Algorand node refused the payment: ${message}`, EXIT.notPayable)
  }
  try {
    const confirmed = await algosdk.waitForConfirmation(algod, txId, params.waitRounds ?? 20)
    return { txId, payer: account.addr.toString(), confirmedRound: confirmed.confirmedRound ?? 0n }
  } catch (error) {
    if (status(error) === undefined && !(error instanceof Error && /rounds/.test(error.message))) throw unreachable(params.algodUrl, error, 'algod')
    throw new CliError('not_payable', `payment ${txId} was not confirmed: ${nodeMessage(error)}`, EXIT.notPayable)
  }
}
