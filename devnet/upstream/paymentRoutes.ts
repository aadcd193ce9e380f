/**
 * The Turbo-like upstream's payment service: balances, prices, rates and top-ups credited from a USDC transfer to
 * the deposit address on a local chain (once per transaction).
 */
import type { ServerResponse } from 'node:http'
import { createPublicClient, decodeEventLog, http, parseAbiItem, type Hex } from 'viem'
import { HttpError, sendJson, type Request, type Router } from '../http.js'
import type { ItemStore } from './ItemStore.js'
import { priceBytes, wincForUsdAtomic, type Pricing } from './pricing.js'
import { addTurboReadRoutes } from './turboReads.js'

export interface FundingChain {
  chainId: number
  rpcUrl: string
  tokenAddress: `0x${string}`
}

/** Where top-ups are paid, and the chains to check them on (keyed by currency name). */
export type Funding = { depositAddress: `0x${string}`; currencies: Record<string, FundingChain> }

const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')

/** An error answered as plain text, as Turbo does. */
export const textError = (status: number, text: string) => new HttpError(status, text, { __text: text })

export function addPaymentRoutes(router: Router, store: ItemStore, pricing: Pricing, funding: Funding | undefined): void {
  const balanceReply = (address: string) => {
    const winc = store.balance(address)
    if (winc === undefined) throw textError(404, 'User Not Found')
    return winc
  }
  router.get('/v1/balance/{address}', (req, res) => {
    sendJson(res, 200, { winc: balanceReply(req.params.address as string).toString() })
  })
  router.get('/v1/account/balance/{token}', (req, res) => {
    const address = req.query.get('address')
    if (!address) throw textError(400, 'Missing address query parameter')
    const winc = balanceReply(address).toString()
    sendJson(res, 200, { winc, controlledWinc: winc, effectiveBalance: winc, givenApprovals: [], receivedApprovals: [] })
  })
  router.get('/v1/price/bytes/{n}', (req, res) => {
    const n = req.params.n as string
    if (!/^\d+$/.test(n)) throw textError(400, 'Invalid byte count')
    sendJson(res, 200, { winc: priceBytes(pricing, BigInt(n)).toString(), adjustments: [] })
  })
  router.get('/v1/rates', (_req, res) => {
    sendJson(res, 200, { winc: pricing.wincPerGiB.toString(), fiat: pricing.fiat, adjustments: [] })
  })
  router.get('/v1/rates/{currency}', (req, res) => {
    const currency = (req.params.currency as string).toLowerCase()
    const rate = pricing.fiat[currency]
    if (rate === undefined) throw textError(404, `Invalid currency: ${currency}`)
    sendJson(res, 200, { currency, rate })
  })
  addTurboReadRoutes(router, pricing) // currencies, countries, price of fiat and token amounts
  router.post('/v1/top-up/wallet/{address}/{currency}/{txHash}', (req, res) => topUp(req, res, { store, pricing, funding }))
}

/** Credits the USDC a transaction paid to the deposit address, in winc, once per transaction. */
async function topUp(req: Request, res: ServerResponse, { store, pricing, funding }: { store: ItemStore; pricing: Pricing; funding: Funding | undefined }): Promise<void> {
  const { address, currency, txHash } = req.params as Record<string, string>
  const chain = funding?.currencies[currency.toLowerCase()]
  if (!funding || !chain) throw textError(400, `Unsupported currency: ${currency}`)
  if (!/^0x[0-9a-fA-F]{64}$/.test(txHash)) throw textError(400, 'Invalid transaction id')
  const key = `${currency.toLowerCase()}:${txHash.toLowerCase()}`
  const already = store.creditedTx(key)
  const pub = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0 }) })
  let receipt
  try {
    receipt = await pub.getTransactionReceipt({ hash: txHash as Hex })
  } catch {
    throw textError(404, 'Transaction not found')
  }
  if (receipt.status !== 'success') throw textError(400, 'Transaction failed on chain')
  let amount = 0n
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== chain.tokenAddress.toLowerCase()) continue
    try {
      const ev = decodeEventLog({ abi: [transferEvent], data: log.data, topics: log.topics })
      if (ev.args.to.toLowerCase() === funding.depositAddress.toLowerCase()) amount += ev.args.value
    } catch {
      /* not a Transfer */
    }
  }
  if (amount === 0n) throw textError(400, 'Transaction does not pay the deposit address')
  const winc = wincForUsdAtomic(pricing, amount)
  const creditedTransaction = {
    transactionId: txHash,
    transactionQuantity: amount.toString(),
    tokenType: currency.toLowerCase(),
    owner: address,
    winstonCreditAmount: winc.toString(),
    blockHeight: Number(receipt.blockNumber),
  }
  if (already) {
    sendJson(res, 200, { message: 'Transaction already credited', status: 'confirmed', creditedTransaction: { ...creditedTransaction, owner: already.address } })
    return
  }
  const balance = store.recordCredit(key, address, winc, currency.toLowerCase())
  sendJson(res, 200, { message: 'Transaction credited', status: 'confirmed', creditedTransaction, winc: balance.toString() })
}
