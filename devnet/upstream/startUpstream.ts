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
import { timingSafeEqual } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { HttpError, Router, sendJson, sendText, serve, type Request } from '../http.js'
import { openItemStore, type ItemStore } from './ItemStore.js'
import { addPaymentRoutes, type Funding } from './paymentRoutes.js'
import { DEFAULT_PRICING, type Pricing } from './pricing.js'
import { loadArbundles, uploadRoute } from './uploadRoute.js'

export type { FundingChain } from './paymentRoutes.js'
export { ownerAddress } from './uploadRoute.js'

export interface UpstreamOptions {
  port?: number
  dataDir: string
  pricing?: Partial<Pricing>
  /** Block interval of the devnet weave (ms); default 2000. */
  blockIntervalMs?: number
  adminToken?: string
  /** Where top-ups are paid, and the chains to check them on (keyed by currency name). */
  funding?: Funding
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

function bearer(req: Request): string | undefined {
  const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')
  return m?.[1]
}

function safeEq(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

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

  addPaymentRoutes(router, store, pricing, opts.funding)

  // ------------------------------------------------------------------ upload service
  const info = (_req: Request, res: ServerResponse) =>
    sendJson(res, 200, {
      version: '0.2.0',
      addresses: { ethereum: opts.funding?.depositAddress ?? null },
      gateway: gatewayHost,
      freeUploadLimitBytes: pricing.freeBytes,
    })
  router.get('/', info)
  router.get('/v1/info', info)

  const upload = uploadRoute({ store, pricing, maxItemBytes, gatewayHost })
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
