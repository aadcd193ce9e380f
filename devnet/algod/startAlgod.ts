/**
 * algod-compatible devnet node for what algosdk (3.x) calls, replies encoded with algosdk's own model classes:
 *   POST /v2/transactions                          raw msgpack signed txn(s) → {txId}; 400 {message} like algod
 *   GET  /v2/transactions/params                   → TransactionParametersResponse
 *   GET  /v2/transactions/pending/{txid}[?format=msgpack|json] → PendingTransactionResponse; 404 unknown
 *   GET  /v2/status, /v2/status/wait-for-block-after/{round}   → NodeStatusResponse
 *   GET  /v2/accounts/{addr}, /v2/accounts/{addr}/assets/{id}, /v2/assets/{id}
 *   GET  /health, /versions, /genesis (no token, as on algod)
 * Every /v2 route requires `X-Algo-API-Token` (401 "Invalid API Token"). Rounds advance every
 * `roundIntervalMs`; a transaction is confirmed `confirmRounds` rounds after submission.
 */
import algosdk from 'algosdk'
import type { ServerResponse } from 'node:http'
import { timingSafeEqual } from 'node:crypto'
import { HttpError, Router, sendBytes, sendJson, serve, type Request } from '../http.js'
import { AlgoLedger, CONSENSUS_VERSION, DEVNET_ASA_IDS, devnetGenesis, MIN_FEE, OTHER_ASA_ID, TxnRejected } from './AlgoLedger.js'
import { assetParams, nodeStatus, pendingTransaction, USDC_TOTAL } from './algodModels.js'

const { modelsv2 } = algosdk

export interface AlgodAccountFunding {
  address: string
  microAlgos: bigint
  /** USDC ASA units (6 decimals); the account is opted in when this is set (0 = opted in, empty). */
  usdc?: bigint
  /** Units of the second ASA (`OTHER_ASA_ID`), likewise: opted in when set. */
  otherAsa?: bigint
}

export interface AlgodOptions {
  port?: number
  token: string
  genesisId?: string
  /** Round interval (ms), default 1000. */
  roundIntervalMs?: number
  /** Rounds from submission to confirmation, default 1. */
  confirmRounds?: number
  /** Address of the USDC ASA creator/reserve (holds the unallocated supply). */
  assetCreator: string
  accounts?: AlgodAccountFunding[]
  /** Longest wait-for-block-after hold (ms), default 60000 like algod. */
  maxWaitMs?: number
}

export interface AlgodPeer {
  url: string
  port: number
  token: string
  genesisId: string
  genesisHash: string
  ledger: AlgoLedger
  /** Produces a round now. */
  advance(): bigint
  close(): Promise<void>
}

function wantsMsgpack(req: Request): boolean {
  return req.query.get('format') === 'msgpack'
}

function reply(req: Request, res: ServerResponse, model: algosdk.Encodable, status = 200): void {
  if (wantsMsgpack(req)) {
    sendBytes(res, status, algosdk.encodeMsgpack(model), 'application/msgpack')
    return
  }
  const text = algosdk.encodeJSON(model)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

const algodError = (status: number, message: string) => new HttpError(status, message, { message })

export async function startAlgod(opts: AlgodOptions): Promise<AlgodPeer> {
  const genesis = devnetGenesis(opts.genesisId ?? 'devnet-v1')
  const ledger = new AlgoLedger(genesis, opts.assetCreator, USDC_TOTAL)
  for (const a of opts.accounts ?? []) {
    ledger.fund(a.address, a.microAlgos)
    if (a.usdc !== undefined) ledger.allocateAsset(a.address, a.usdc)
    if (a.otherAsa !== undefined) ledger.allocateAsset(a.address, a.otherAsa, OTHER_ASA_ID)
  }
  const rounds = new Rounds(ledger, opts.maxWaitMs ?? 60_000)
  const timer = setInterval(() => rounds.advance(), opts.roundIntervalMs ?? 1000)
  timer.unref()

  const router = new Router()
  router.before = (req) => {
    if (!req.path.startsWith('/v2/')) return
    const got = req.headers['x-algo-api-token']
    const tok = Array.isArray(got) ? got[0] : got
    const a = Buffer.from(tok ?? '')
    const b = Buffer.from(opts.token)
    if (a.length !== b.length || !timingSafeEqual(a, b)) throw algodError(401, 'Invalid API Token')
  }
  nodeRoutes(router, genesis)
  statusRoutes(router, ledger, rounds)
  transactionRoutes(router, ledger, genesis, BigInt(opts.confirmRounds ?? 1))
  accountRoutes(router, ledger)

  const listening = await serve(router, { port: opts.port, name: 'algod' })
  return {
    url: listening.url,
    port: listening.port,
    token: opts.token,
    genesisId: genesis.id,
    genesisHash: genesis.hashB64,
    ledger,
    advance: () => rounds.advance(),
    close: async () => {
      clearInterval(timer)
      rounds.wakeAll()
      await listening.close()
    },
  }
}

type Genesis = ReturnType<typeof devnetGenesis>

/** The ledger's rounds and the requests holding for the next one (`wait-for-block-after`). */
class Rounds {
  private readonly waiters = new Set<() => void>()

  constructor(
    private readonly ledger: AlgoLedger,
    private readonly maxWaitMs: number,
  ) {}

  /** Produces a round now and wakes every waiter. */
  advance(): bigint {
    const r = this.ledger.nextRound()
    this.wakeAll()
    return r
  }

  wakeAll(): void {
    for (const w of [...this.waiters]) w()
  }

  /** Resolves once a round after `round` exists, after `maxWaitMs`, or when the client goes away. */
  waitAfter(round: bigint, req: Request): Promise<void> {
    const { ledger, waiters } = this
    return new Promise<void>((resolve) => {
      const done = () => {
        if (ledger.round > round) finish()
      }
      const finish = () => {
        waiters.delete(done)
        clearTimeout(t)
        req.raw.off('close', finish)
        resolve()
      }
      const t = setTimeout(finish, this.maxWaitMs)
      waiters.add(done)
      req.raw.once('close', finish)
    })
  }
}

/** What algod answers without a token: health, readiness, the genesis and the versions. */
function nodeRoutes(router: Router, genesis: Genesis): void {
  router.get('/health', (_req, res) => {
    res.writeHead(200).end()
  })
  router.get('/ready', (_req, res) => {
    res.writeHead(200).end()
  })
  router.get('/genesis', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(genesis.json)
  })
  router.get('/versions', (_req, res) =>
    sendJson(res, 200, {
      versions: ['v2'],
      genesis_id: genesis.id,
      genesis_hash_b64: genesis.hashB64,
      build: { major: 4, minor: 0, build_number: 0, commit_hash: 'devnet', branch: 'devnet', channel: 'devnet' },
    }),
  )
}

function statusRoutes(router: Router, ledger: AlgoLedger, rounds: Rounds): void {
  router.get('/v2/status', (req, res) => reply(req, res, nodeStatus(ledger)))
  router.get('/v2/status/wait-for-block-after/{round}', async (req, res) => {
    const r = req.params.round as string
    if (!/^\d+$/.test(r)) throw algodError(400, `invalid round: ${r}`)
    const round = BigInt(r)
    if (ledger.round <= round && round <= ledger.round + 1000n) await rounds.waitAfter(round, req)
    if (res.destroyed) return
    reply(req, res, nodeStatus(ledger))
  })
}

/** Suggested parameters, submission (confirmed `confirmRounds` rounds later) and the pending pool. */
function transactionRoutes(router: Router, ledger: AlgoLedger, genesis: Genesis, confirmRounds: bigint): void {
  router.get('/v2/transactions/params', (req, res) =>
    reply(
      req,
      res,
      new modelsv2.TransactionParametersResponse({
        consensusVersion: CONSENSUS_VERSION,
        fee: 0,
        genesisHash: genesis.hash,
        genesisId: genesis.id,
        lastRound: ledger.round,
        minFee: MIN_FEE,
      }),
    ),
  )
  router.post('/v2/transactions', async (req, res) => {
    const body = await req.body(5 * 1024 * 1024)
    let group: algosdk.SignedTransaction[]
    try {
      group = AlgoLedger.decodeGroup(body)
    } catch (e) {
      throw algodError(400, `msgpack decode error [pos ${0}]: ${(e as Error).message}`)
    }
    try {
      const txId = ledger.submit(group, confirmRounds)
      reply(req, res, new modelsv2.PostTransactionsResponse({ txid: txId }))
    } catch (e) {
      if (e instanceof TxnRejected) throw algodError(400, `TransactionPool.Remember: ${e.message}`)
      throw e
    }
  })
  router.get('/v2/transactions/pending/{txid}', (req, res) => {
    const p = ledger.lookup(req.params.txid as string)
    if (!p) throw algodError(404, 'txn does not exist')
    reply(req, res, pendingTransaction(p))
  })
}

/** Accounts, their asset holdings and the devnet's assets. */
function accountRoutes(router: Router, ledger: AlgoLedger): void {
  const parseAddress = (s: string): string => {
    if (!algosdk.isValidAddress(s)) throw algodError(400, `failed to parse the address: ${s}`)
    return s
  }
  router.get('/v2/accounts/{addr}', (req, res) => {
    const address = parseAddress(req.params.addr as string)
    const a = ledger.peek(address) ?? { amount: 0n, assets: new Map<bigint, bigint>() }
    const assets = [...a.assets].map(([assetId, amount]) => new modelsv2.AssetHolding({ amount, assetId, isFrozen: false }))
    const created = address === ledger.assetCreator ? DEVNET_ASA_IDS.length : 0
    reply(
      req,
      res,
      new modelsv2.Account({
        address,
        amount: a.amount,
        amountWithoutPendingRewards: a.amount,
        minBalance: ledger.minBalance(a),
        pendingRewards: 0,
        rewards: 0,
        round: ledger.round,
        status: 'Offline',
        totalAppsOptedIn: 0,
        totalAssetsOptedIn: assets.length,
        totalCreatedApps: 0,
        totalCreatedAssets: created,
        assets,
        sigType: a.amount > 0n ? 'sig' : undefined,
      }),
    )
  })
  const assetId = (text: string) => BigInt(/^\d+$/.test(text) ? text : '0')
  router.get('/v2/accounts/{addr}/assets/{id}', (req, res) => {
    const address = parseAddress(req.params.addr as string)
    const id = assetId(req.params.id as string)
    const held = DEVNET_ASA_IDS.includes(id) ? ledger.peek(address)?.assets.get(id) : undefined
    if (held === undefined) throw algodError(404, 'account asset info not found')
    reply(
      req,
      res,
      new modelsv2.AccountAssetResponse({
        round: ledger.round,
        assetHolding: new modelsv2.AssetHolding({ amount: held, assetId: id, isFrozen: false }),
        createdAsset: address === ledger.assetCreator ? assetParams(ledger, id) : undefined,
      }),
    )
  })
  router.get('/v2/assets/{id}', (req, res) => {
    const id = assetId(req.params.id as string)
    if (!DEVNET_ASA_IDS.includes(id)) throw algodError(404, 'asset does not exist')
    reply(req, res, new modelsv2.Asset({ index: id, params: assetParams(ledger, id) }))
  })

}
