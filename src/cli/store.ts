/**
 * `pay2store store <file>`: sends the file, reads the 402 quote, pays the requirement of the chosen rail
 * through that rail's client side (src/x402/rails/clientRails.ts, picked by the requirement's network: a stock
 * x402 client signs, or the client pays on the rail's ledger itself and names its transaction; `--max-usd`
 * caps what it pays), sends the file again with the payment, and prints the receipt and the Arweave link.
 * Both sends show an upload bar.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { type ClientPayer, clientRailFor } from '../x402/rails/clientRails.js'
import type { ClientPayInput, ClientPayment } from '../x402/rails/ClientRail.js'
import { CliError, EXIT } from './CliError.js'
import { payerOf, toCliError } from './keys.js'
import type { Output } from './output.js'
import { formatAmount, unitOfRequirement } from './formatAmount.js'
import { postFile } from './postFile.js'
import { createBars } from './progress.js'
import { onRail, RAILS } from './rails.js'

/** The command's options; each rail's client side reads its own key options among them. */
export type StoreOptions = Record<string, unknown> & {
  gateway: string
  rail: string
  devnet?: string | boolean
  arweave: string
  tagApp?: string
  maxUsd?: string
}

export type StoreResult = {
  arTxId: string
  sha256: string
  sizeBytes: number
  network: string
  amountAtomic: string
  asset: string
  payer: string
  arweaveUrl: string
  receipt: Record<string, unknown>
}

function parseJson(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>
  } catch {
    return { message: text.slice(0, 300) }
  }
}

function failure(status: number, body: Record<string, unknown>, what: string): CliError {
  const code = typeof body.error === 'string' ? body.error : `http_${status}`
  const message = `${what} answered ${status}: ${typeof body.message === 'string' ? body.message : code}`
  // the gateway's own pre-check ("the payer's balance … does not cover …") or the facilitator's and chain's words
  if (status === 402 && /insufficient_balance|insufficient funds|exceeds balance|balance \(\d+\) does not cover/i.test(message)) return new CliError('insufficient_funds', `the payer's balance does not cover the price (${message})`, EXIT.insufficientFunds)
  if (status === 402) return new CliError(code, message, EXIT.notPayable)
  if (status === 400 || status === 413 || status === 415) return new CliError(code, message, EXIT.usage)
  return new CliError(code, message, EXIT.server)
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/** The rail's payment for the quote; its failures as the CLI's errors. */
async function pay(payer: ClientPayer, input: ClientPayInput): Promise<ClientPayment> {
  try {
    return await payer.pay(input)
  } catch (error) {
    throw toCliError(error)
  }
}

export async function store(file: string, options: StoreOptions, out: Output): Promise<StoreResult> {
  const network = RAILS.get(options.rail)
  if (network === undefined) throw new CliError('bad_rail', `unknown rail ${options.rail}; choose ${[...RAILS.keys()].join(' or ')}`, EXIT.usage)
  let size: number
  try {
    const s = await stat(file)
    if (!s.isFile()) throw new Error('not a regular file')
    size = s.size
  } catch (error) {
    throw new CliError('bad_file', `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, EXIT.usage)
  }
  if (size === 0) throw new CliError('bad_file', `${file} is empty; there is nothing to store`, EXIT.usage)
  // keys before any upload: no key, no point sending the file
  const rail = clientRailFor(network)
  if (!rail) throw new CliError('bad_rail', `no client pays on ${options.rail} (${network})`, EXIT.usage)
  const payer = await payerOf(rail, options)
  const url = `${options.gateway.replace(/\/$/, '')}/store`
  const tag: Record<string, string> = options.tagApp ? { 'X-SVC-Tag-App': options.tagApp } : {}
  const bars = createBars(!out.json)
  try {
    const quote = await postFile({ url, path: file, size, headers: tag, service: 'gateway', onProgress: (sent, total) => bars.update('quote', 'quote (upload)', sent, total) })
    bars.done() // the quote's bar stays as drawn; what follows prints below it
    const say = (text: string) => {
      if (!bars.print(text)) out.line(text)
    }
    const quoteBody = parseJson(quote.body)
    if (quote.status !== 402) throw failure(quote.status, quoteBody, 'POST /store')
    const http402 = new x402HTTPClient(new x402Client())
    const required = http402.getPaymentRequiredResponse((n) => (quote.headers[n.toLowerCase()] as string | undefined) ?? null, quoteBody)
    const offered = required.accepts.find((a) => onRail(options.rail, a.network))
    if (!offered) {
      throw new CliError('not_payable', `the gateway offers no payment on ${options.rail} (${network}…); it offers ${required.accepts.map((a) => a.network).join(', ')}`, EXIT.notPayable)
    }
    const { payload, payer: paidBy } = await pay(payer, {
      required: required as unknown as ClientPayInput['required'],
      offered: offered as unknown as ClientPayInput['offered'],
      railName: options.rail,
      describeAmount: (amount, asset) => formatAmount(amount, unitOfRequirement(offered.network, asset), asset),
      resourceUrl: url,
      file: { sha256Hex: () => sha256Of(file), sizeBytes: size },
      maxUsd: options.maxUsd,
      say,
    })
    const accepted = payload.accepted as { amount: string; asset: string; network: string }
    const paid = await postFile({
      url,
      path: file,
      size,
      headers: { ...tag, ...http402.encodePaymentSignatureHeader(payload as Parameters<typeof http402.encodePaymentSignatureHeader>[0]) },
      service: 'gateway',
      onProgress: (sent, total) => bars.update('upload', 'upload (paid)', sent, total),
    })
    bars.done()
    const body = parseJson(paid.body)
    if (paid.status !== 200) throw failure(paid.status, body, 'POST /store (paid)')
    const arTxId = String(body.arTxId)
    return {
      arTxId,
      sha256: String(body.sha256),
      sizeBytes: Number(body.sizeBytes),
      network: accepted.network,
      amountAtomic: accepted.amount,
      asset: accepted.asset,
      payer: paidBy,
      arweaveUrl: `${options.arweave.replace(/\/$/, '')}/${arTxId}`,
      receipt: body,
    }
  } finally {
    bars.close()
  }
}
