/**
 * `pay2store store <file>`: sends the file, reads the 402 quote, pays the requirement of the chosen rail
 * with a stock x402 client (`@x402/core` + `@x402/evm`, default spend controls: the canonical USDC, at
 * most $1 per payment unless `--max-usd` says more), sends the file again with the payment, and prints
 * the receipt and the Arweave link. Both sends show an upload bar. On the Algorand rail, which no x402
 * client pays, the CLI sends the ASA payment itself (payAlgorand.ts) and names its transaction.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { privateKeyToAccount } from 'viem/accounts'
import { CliError, EXIT } from './CliError.js'
import { algorandKey, evmKey } from './keys.js'
import type { Output } from './output.js'
import { formatAmount, unitOfRequirement } from './formatAmount.js'
import { payAlgorand, type AlgorandRequirement } from './payAlgorand.js'
import { postFile } from './postFile.js'
import { createBars } from './progress.js'
import { onRail, RAILS } from './rails.js'

export type StoreOptions = {
  gateway: string
  rail: string
  keyEnv: string
  algorandKeyEnv: string
  algod?: string
  algodTokenEnv: string
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
  const algorand = options.rail === 'algorand' ? algorandKey(options) : undefined
  const account = algorand ? undefined : privateKeyToAccount(evmKey(options))
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
    const caps = options.maxUsd === undefined ? {} : { maxAmountPerPayment: `$${options.maxUsd}` }
    const client = new x402Client()
    if (account) client.register(network as `${string}:${string}`, new ExactEvmScheme(toClientEvmSigner(account))).setSpendControls(caps as never)
    const http402 = new x402HTTPClient(client)
    const required = http402.getPaymentRequiredResponse((n) => (quote.headers[n.toLowerCase()] as string | undefined) ?? null, quoteBody)
    const offered = required.accepts.find((a) => onRail(options.rail, a.network))
    if (!offered) {
      throw new CliError('not_payable', `the gateway offers no payment on ${options.rail} (${network}…); it offers ${required.accepts.map((a) => a.network).join(', ')}`, EXIT.notPayable)
    }
    let payload
    let payer: string
    if (algorand) {
      const requirement = offered as unknown as AlgorandRequirement
      if (options.maxUsd !== undefined && Number(requirement.amount) / 1e6 > Number(options.maxUsd)) {
        throw new CliError('not_payable', `cannot pay this quote: ${formatAmount(requirement.amount, unitOfRequirement(requirement.network, String(requirement.asset)), String(requirement.asset))} is above --max-usd ${options.maxUsd}`, EXIT.notPayable)
      }
      say(`paying ${formatAmount(requirement.amount, unitOfRequirement(requirement.network, String(requirement.asset)), String(requirement.asset))} (ASA ${requirement.asset}) on algorand from ${algorand.account.addr}`)
      const paid = await payAlgorand({
        ...algorand,
        requirement,
        resourceUrl: required.resource?.url ?? requirement.resource ?? url,
        sha256Hex: await sha256Of(file),
        sizeBytes: size,
      })
      payer = paid.payer
      payload = { x402Version: 2, resource: required.resource, accepted: offered, payload: { txId: paid.txId } }
    } else {
      try {
        payload = await http402.createPaymentPayload(required)
      } catch (error) {
        throw new CliError('not_payable', `cannot pay this quote: ${(error as Error).message}`, EXIT.notPayable)
      }
      payer = account!.address
      const accepted = payload.accepted as { amount: string; asset: string }
      say(`paying ${formatAmount(accepted.amount, unitOfRequirement(network, accepted.asset), accepted.asset)} on ${options.rail} from ${payer}`)
    }
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
      payer,
      arweaveUrl: `${options.arweave.replace(/\/$/, '')}/${arTxId}`,
      receipt: body,
    }
  } finally {
    bars.close()
  }
}
