/**
 * Arweave gateway peer over the upstream's ItemStore (same data directory).
 *   GET /tx/{id}/status → 404 "Not Found" · 202 "Pending" (not yet in a block) ·
 *                         200 {block_height, block_indep_hash, number_of_confirmations}
 *                         (confirmations = tip height − block height + 1, growing with every block)
 *   GET /{id}, /raw/{id} → the data item's data with its `Content-Type` tag (served as soon as uploaded,
 *                         like the optimistic cache of arweave.net)
 *   POST/GET /graphql   → the Arweave GraphQL subset for data items (transaction, transactions; see graphqlSchema.ts)
 *   GET /tx/{id}        → 404 for data items (they are not layer-1 transactions; use GraphQL for their tags)
 *   GET /info           → {network, height, current, blocks, …}
 *   POST /__devnet/mine → produce a block now (tests)
 * Blocks are produced every `blockIntervalMs` (default 2000) while a peer holds the store open.
 */
import { createReadStream } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { HttpError, Router, sendJson, sendText, serve, type Request } from '../http.js'
import { runGraphql } from './graphqlSchema.js'
import { openItemStore, type ItemStore } from '../upstream/ItemStore.js'

export interface ArweaveGatewayOptions {
  port?: number
  dataDir: string
  blockIntervalMs?: number
}

export interface ArweaveGatewayPeer {
  url: string
  port: number
  store: ItemStore
  mine(): number
  close(): Promise<void>
}

const ID_RE = /^[A-Za-z0-9_-]{43}$/

export async function startArweaveGateway(opts: ArweaveGatewayOptions): Promise<ArweaveGatewayPeer> {
  const store = openItemStore(opts.dataDir, { blockIntervalMs: opts.blockIntervalMs })
  const router = gatewayRoutes(store)
  const listening = await serve(router, {
    port: opts.port,
    name: 'arweave',
    onError: (res, err) => sendText(res, err.status, err.message),
  })
  let closed = false
  return {
    url: listening.url,
    port: listening.port,
    store,
    mine: () => store.mineBlock().height,
    close: async () => {
      await listening.close()
      if (!closed) store.release()
      closed = true
    },
  }
}

/** The gateway's routes over the item store. */
function gatewayRoutes(store: ItemStore): Router {
  const router = new Router()
  router.get('/info', (_req, res) =>
    sendJson(res, 200, {
      network: 'arweave.devnet',
      version: 5,
      release: 1,
      height: store.height,
      current: store.tipHash,
      blocks: store.height + 1,
      peers: 0,
      queue_length: 0,
      node_state_latency: 0,
    }),
  )
  router.get('/tx/{id}/status', (req, res) => {
    const id = req.params.id as string
    const m = ID_RE.test(id) ? store.get(id) : undefined
    if (!m) {
      sendText(res, 404, 'Not Found')
      return
    }
    if (m.blockHeight === undefined || m.blockHash === undefined) {
      sendText(res, 202, 'Pending')
      return
    }
    sendJson(res, 200, {
      block_height: m.blockHeight,
      block_indep_hash: m.blockHash,
      number_of_confirmations: store.height - m.blockHeight + 1,
    })
  })
  const data = itemData(store)
  const graphqlHandler = graphqlRoute(store)
  router.post('/graphql', graphqlHandler)
  router.get('/graphql', graphqlHandler)
  router.get('/tx/{id}', (_req, res) => sendText(res, 404, 'Not Found'))
  router.get('/raw/{id}', (req, res) => data(req, req.params.id as string, res))
  router.get('/{id}', (req, res) => data(req, req.params.id as string, res))
  router.post('/__devnet/mine', (_req, res) => sendJson(res, 200, store.mineBlock()))

  return router
}

/** Streams an item's data (never the whole item in memory); honours a single `Range: bytes=a-b`. */
function itemData(store: ItemStore): (req: Request, id: string, res: ServerResponse) => Promise<void> {
  return async (req: Request, id: string, res: ServerResponse) => {
    if (!ID_RE.test(id)) throw new HttpError(400, 'Invalid ID')
    const m = store.get(id)
    if (!m) {
      sendText(res, 404, 'Not Found')
      return
    }
    const size = m.dataSize
    let start = 0
    let end = size - 1
    let status = 200
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '')
    if (range && (range[1] || range[2])) {
      if (range[1]) {
        start = Number(range[1])
        end = range[2] ? Math.min(Number(range[2]), size - 1) : size - 1
      } else {
        start = Math.max(0, size - Number(range[2]))
      }
      if (start > end || start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end()
        return
      }
      status = 206
    }
    const headers: Record<string, string | number> = {
      'content-type': m.contentType,
      'content-length': size === 0 ? 0 : end - start + 1,
      'accept-ranges': 'bytes',
      'x-arweave-id': id,
      'cache-control': 'public, max-age=2592000, immutable',
    }
    if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${size}`
    res.writeHead(status, headers)
    if (req.method === 'HEAD' || size === 0) {
      res.end()
      return
    }
    await pipeline(createReadStream(store.itemPath(id), { start: m.dataOffset + start, end: m.dataOffset + end }), res)
  }
}

/** The GraphQL route, by POST body or GET query string. */
function graphqlRoute(store: ItemStore): (req: Request, res: ServerResponse) => Promise<void> {
  return async (req: Request, res: ServerResponse) => {
    let query: string | undefined
    let variables: Record<string, unknown> | undefined
    let operationName: string | undefined
    if (req.method === 'POST') {
      try {
        const b = JSON.parse((await req.body(1 << 20)).toString()) as { query?: string; variables?: Record<string, unknown>; operationName?: string }
        ;({ query, variables, operationName } = b)
      } catch {
        sendJson(res, 400, { errors: [{ message: 'POST body must be JSON {query, variables?}' }] })
        return
      }
    } else {
      query = req.query.get('query') ?? undefined
      const v = req.query.get('variables')
      variables = v ? (JSON.parse(v) as Record<string, unknown>) : undefined
      operationName = req.query.get('operationName') ?? undefined
    }
    if (!query) {
      sendJson(res, 400, { errors: [{ message: 'Must provide query string.' }] })
      return
    }
    const result = await runGraphql(store, query, variables, operationName)
    sendJson(res, result.errors && !result.data ? 400 : 200, result)
  }
}
