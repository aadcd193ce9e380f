/**
 * Turbo-compatible storage upstream (payment service + upload service on one port).
 *
 * Payment (seed 4.7 paths and the Turbo SDK's):
 *   GET  /v1/balance/{address}                       → {winc}; 404 "User Not Found" = zero
 *   GET  /v1/account/balance/{token}?address=         → {winc, controlledWinc, effectiveBalance, …}; 404 likewise
 *   GET  /v1/price/bytes/{n}                          → {winc, adjustments: []}
 *   GET  /v1/rates                                    → {winc, fiat: {usd, …}, adjustments: []} (price of 1 GiB)
 *   GET  /v1/currencies, /v1/countries, /v1/price/{currency|token}/{amount} → turboReads.ts
 *   POST /v1/top-up/wallet/{address}/{currency}/{tx}  → credits a USDC transfer to the deposit address found in
 *        `tx` on the local chain of `currency` (`base-usdc` = chain 8453, `usdc` = chain 1); once per tx
 * Upload:
 *   POST /tx, /v1/tx, /v1/tx/{token} (octet-stream ANS-104 data item)
 *        200 {id, owner, dataCaches, fastFinalityIndexes, deadlineHeight, timestamp, version, winc}
 *        202 "Data Item Exists" · 400 "Invalid Data Item" · 402 "Insufficient balance"
 *   GET  /, /v1/info                                  → service info (free upload limit, gateway)
 * Devnet hooks (bearer `adminToken` when set):
 *   POST /__devnet/credit/{address} {winc}            → credit without a funding transaction
 *   POST /__devnet/fail {status?, scope?: "all"|"uploads", times?} · POST /__devnet/recover
 *
 * Data items are verified for real (arbundles FileDataItem.verify, streamed from disk), charged in winc
 * against the signer's normalised address (Arweave: base64url(sha256(owner)); Ethereum: 0x address), and
 * stored in the shared ItemStore (survives close/restart on the same directory).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createPublicClient, decodeEventLog, http, parseAbiItem, type Hex } from 'viem'
import { publicKeyToAddress } from 'viem/accounts'
import { HttpError, Router, sendJson, sendText, serve, type Request } from '../http.js'
import { openItemStore, type ItemStore, type StoredItem } from './ItemStore.js'
import { DEFAULT_PRICING, priceBytes, uploadCost, wincForUsdAtomic, type Pricing } from './pricing.js'
import { addTurboReadRoutes } from './turboReads.js'

export interface FundingChain {
  chainId: number
  rpcUrl: string
  tokenAddress: `0x${string}`
}

export interface UpstreamOptions {
  port?: number
  dataDir: string
  pricing?: Partial<Pricing>
  /** Block interval of the devnet weave (ms); default 2000. */
  blockIntervalMs?: number
  adminToken?: string
  /** Where top-ups are paid, and the chains to check them on (keyed by currency name). */
  funding?: { depositAddress: `0x${string}`; currencies: Record<string, FundingChain> }
  /** Public URL of the Arweave gateway peer, advertised in receipts/info. */
  gatewayUrl?: string
  /** Balances credited at start when the address has none yet (winc). */
  prefund?: Record<string, bigint>
  /** Largest accepted data item (bytes); default 4 GiB. */
  maxItemBytes?: number
}

export interface FailureMode {
  status?: number
  scope?: 'all' | 'uploads'
  /** Fail only the next `times` matching requests. */
  times?: number
}

export interface UpstreamPeer {
  url: string
  port: number
  store: ItemStore
  pricing: Pricing
  fail(mode?: FailureMode): void
  recover(): void
  credit(address: string, winc: bigint): bigint
  close(): Promise<void>
}

const transferEvent = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)')

let arbundles: Promise<typeof import('@dha-team/arbundles')> | undefined
const loadArbundles = () => (arbundles ??= import('@dha-team/arbundles'))

/** Normalised owner address of a data item signer, as Turbo keys balances. */
export function ownerAddress(signatureType: number, rawOwner: Buffer): string {
  if (signatureType === 3 || signatureType === 7) {
    // Ethereum (secp256k1, 65-byte uncompressed public key)
    return publicKeyToAddress(`0x${rawOwner.toString('hex')}`)
  }
  return createHash('sha256').update(rawOwner).digest('base64url')
}

function bearer(req: Request): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')
  return m?.[1]
}

function safeEq(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

const textError = (status: number, text: string) => new HttpError(status, text, { __text: text })

export async function startUpstream(opts: UpstreamOptions): Promise<UpstreamPeer> {
  const pricing: Pricing = { ...DEFAULT_PRICING, ...opts.pricing, fiat: { ...DEFAULT_PRICING.fiat, ...opts.pricing?.fiat } }
  const store = openItemStore(opts.dataDir, { blockIntervalMs: opts.blockIntervalMs })
  for (const [addr, winc] of Object.entries(opts.prefund ?? {})) {
    if (store.balance(addr) === undefined) store.credit(addr, winc)
  }
  const maxItemBytes = opts.maxItemBytes ?? 4 * 1024 ** 3
  const gatewayHost = opts.gatewayUrl ? new URL(opts.gatewayUrl).host : 'arweave.net'
  let failure: Required<Omit<FailureMode, 'times'>> & { times?: number } | undefined
  void loadArbundles() // warm the import

  const router = new Router()
  router.before = (req, res) => {
    if (req.path.startsWith('/__devnet/')) {
      if (opts.adminToken && !safeEq(bearer(req) ?? '', opts.adminToken)) throw new HttpError(401, 'admin token required')
      return
    }
    if (!failure) return
    const isUpload = req.method === 'POST' && /^\/(v1\/)?tx(\/[^/]+)?$/.test(req.path)
    if (failure.scope === 'uploads' && !isUpload) return
    if (failure.times !== undefined) {
      if (failure.times <= 0) return
      failure.times -= 1
    }
    req.raw.resume()
    sendText(res, failure.status, failure.status === 503 ? 'Service Unavailable' : 'Internal Server Error')
    return true
  }

  // ------------------------------------------------------------------ payment service
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
  router.post('/v1/top-up/wallet/{address}/{currency}/{txHash}', async (req, res) => {
    const { address, currency, txHash } = req.params as Record<string, string>
    const chain = opts.funding?.currencies[currency.toLowerCase()]
    if (!opts.funding || !chain) throw textError(400, `Unsupported currency: ${currency}`)
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
        if (ev.args.to.toLowerCase() === opts.funding.depositAddress.toLowerCase()) amount += ev.args.value
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
  })

  // ------------------------------------------------------------------ upload service
  const info = (_req: Request, res: import('node:http').ServerResponse) =>
    sendJson(res, 200, {
      version: '0.2.0',
      addresses: { ethereum: opts.funding?.depositAddress ?? null },
      gateway: gatewayHost,
      freeUploadLimitBytes: pricing.freeBytes,
    })
  router.get('/', info)
  router.get('/v1/info', info)

  const upload = async (req: Request, res: import('node:http').ServerResponse) => {
    const ct = (req.headers['content-type'] ?? 'application/octet-stream').split(';')[0]?.trim().toLowerCase()
    if (ct !== 'application/octet-stream') throw textError(400, 'Invalid Content Type')
    const declared = req.headers['content-length']
    if (declared !== undefined && Number(declared) > maxItemBytes) {
      throw textError(400, `Data item is too large, this service only accepts data items up to ${maxItemBytes} bytes!`)
    }
    const ab = await loadArbundles()
    const tmp = join(store.incomingDir, `${Date.now()}-${randomBytes(6).toString('hex')}.part`)
    let size = 0
    try {
      req.raw.on('data', (c: Buffer) => {
        size += c.length
        if (size > maxItemBytes) req.raw.destroy(new Error('too large'))
      })
      await pipeline(req.raw, createWriteStream(tmp))
      if (size < 80) throw textError(400, 'Invalid Data Item')
      let valid = false
      try {
        valid = await ab.file.FileDataItem.verify(tmp)
      } catch {
        valid = false
      }
      if (!valid) throw textError(400, 'Invalid Data Item')
      const item = new ab.file.FileDataItem(tmp)
      const signatureType = await item.signatureType()
      const id = createHash('sha256').update(await item.rawSignature()).digest('base64url')
      const rawOwner = await item.rawOwner()
      const [rawSignature, rawTarget, rawAnchor] = [await item.rawSignature(), await item.rawTarget(), await item.rawAnchor()]
      const tags = await item.tags()
      const dataOffset = await item.dataStart()
      const owner = ownerAddress(signatureType, rawOwner)
      if (store.has(id)) {
        sendText(res, 202, 'Data Item Exists')
        return
      }
      const winc = uploadCost(pricing, size)
      if (!store.debit(owner, winc)) throw textError(402, 'Insufficient balance')
      const contentType = tags.find((t) => t.name.toLowerCase() === 'content-type')?.value ?? 'application/octet-stream'
      const m: StoredItem = {
        id,
        ownerAddress: owner,
        signatureType,
        tags,
        contentType,
        dataOffset,
        itemSize: size,
        dataSize: size - dataOffset,
        winc: winc.toString(),
        timestamp: Date.now(),
        deadlineHeight: store.height + 200,
        ownerKey: rawOwner.toString('base64url'),
        signature: rawSignature.toString('base64url'),
        target: rawTarget.toString('base64url'),
        anchor: rawAnchor.toString('base64url'),
      }
      store.put(tmp, m)
      sendJson(res, 200, {
        id,
        owner,
        dataCaches: [gatewayHost],
        fastFinalityIndexes: [gatewayHost],
        deadlineHeight: m.deadlineHeight,
        timestamp: m.timestamp,
        version: '0.2.0',
        winc: m.winc,
      })
    } finally {
      await rm(tmp, { force: true })
    }
  }
  router.post('/tx', upload)
  router.post('/v1/tx', upload)
  router.post('/v1/tx/{token}', upload)

  // ------------------------------------------------------------------ devnet hooks
  router.post('/__devnet/credit/{address}', async (req, res) => {
    let winc: bigint
    try {
      winc = BigInt((JSON.parse((await req.body(4096)).toString()) as { winc: string | number }).winc)
    } catch {
      throw new HttpError(400, 'body must be {"winc": "<integer>"}')
    }
    if (winc <= 0n) throw new HttpError(400, 'winc must be positive')
    sendJson(res, 200, { address: req.params.address, winc: store.credit(req.params.address as string, winc).toString() })
  })
  router.post('/__devnet/fail', async (req, res) => {
    const raw = (await req.body(4096)).toString()
    const mode = (raw ? JSON.parse(raw) : {}) as FailureMode
    peer.fail(mode)
    sendJson(res, 200, { failing: failure })
  })
  router.post('/__devnet/recover', (_req, res) => {
    peer.recover()
    sendJson(res, 200, { failing: null })
  })

  const listening = await serve(router, {
    port: opts.port,
    name: 'upstream',
    onError: (res, err) => {
      const b = err.body as { __text?: string } | undefined
      if (b?.__text !== undefined) sendText(res, err.status, b.__text)
      else sendJson(res, err.status, err.body ?? { error: err.status >= 500 ? 'internal_error' : 'bad_request', message: err.message })
    },
  })
  let closed = false
  const peer: UpstreamPeer = {
    url: listening.url,
    port: listening.port,
    store,
    pricing,
    fail: (mode = {}) => {
      failure = { status: mode.status ?? 503, scope: mode.scope ?? 'all', times: mode.times }
    },
    recover: () => {
      failure = undefined
    },
    credit: (address, winc) => store.credit(address, winc),
    close: async () => {
      await listening.close()
      if (!closed) store.release()
      closed = true
    },
  }
  return peer
}
