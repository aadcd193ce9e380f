/**
 * The `chain` hook's payer for an Algorand network: an asset transfer of exactly the quoted amount of the
 * requirement's ASA to its `payTo`, signed with the payer's key and sent to algod, its note binding the request
 * (sha256 of `<resource>|<sha256 of the file>|<size>|<price in USD, six decimals>`, the document's rule); the
 * PAYMENT-SIGNATURE header names the confirmed-to-be transaction (`payload.txId`).
 */
import { createHash } from 'node:crypto'
import algosdk from 'algosdk'
import type { Payer } from './types.js'

export type AlgorandPayerOptions = { algodUrl: string; algodToken: string; mnemonic: string }

export function algorandPayer({ algodUrl, algodToken, mnemonic }: AlgorandPayerOptions): Payer {
  const account = algosdk.mnemonicToSecretKey(mnemonic)
  // algosdk takes the port apart from the base URL (an empty port would drop it)
  const base = new URL(algodUrl)
  const port = base.port
  base.port = ''
  const algod = new algosdk.Algodv2(algodToken, base.toString().replace(/\/+$/, ''), port || undefined)
  return async (req, file) => {
    const atomic = BigInt(req.amount)
    const price = `${atomic / 1_000_000n}.${(atomic % 1_000_000n).toString().padStart(6, '0')}`
    const digest = createHash('sha256').update(file).digest('hex')
    const note = createHash('sha256').update(`${req.resource}|${digest}|${file.length}|${price}`).digest()
    const txn = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: account.addr,
      receiver: req.payTo,
      assetIndex: BigInt(req.asset),
      amount: atomic,
      note: new Uint8Array(note),
      suggestedParams: await algod.getTransactionParams().do(),
    })
    const { txid } = await algod.sendRawTransaction(txn.signTxn(account.sk)).do()
    const payload = {
      x402Version: 2,
      scheme: 'exact',
      network: req.network,
      resource: { url: req.resource, description: req.description, mimeType: req.mimeType },
      accepted: req,
      extensions: {},
      outputSchema: null,
      payload: { txId: txid },
    }
    return Buffer.from(JSON.stringify(payload)).toString('base64')
  }
}
