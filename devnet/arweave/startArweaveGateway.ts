/**
 * Arweave gateway peer over the upstream's ItemStore (same data directory).
 *   GET /tx/{id}/status → 404 "Not Found" · 202 "Pending" (not yet in a block) ·
 *                         200 {block_height, block_indep_hash, number_of_confirmations}
 *                         (confirmations = tip height − block height + 1, growing with every block)
 *   GET /{id}, /raw/{id} → the data item's data with its `Content-Type` tag (served as soon as uploaded,
 *                         like the optimistic cache of arweave.net)
 *   GET /info           → {network, height, current, blocks, …}
 *   POST /__devnet/mine → produce a block now (tests)
 * Blocks are produced every `blockIntervalMs` (default 2000) while a peer holds the store open.
 */
import { HttpError, Router, sendBytes, sendJson, sendText, serve } from '../http.js'
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
  const data = async (id: string, res: import('node:http').ServerResponse) => {
    if (!ID_RE.test(id)) throw new HttpError(400, 'Invalid ID')
    const m = store.get(id)
    const bytes = m ? await store.readData(id) : undefined
    if (!m || !bytes) {
      sendText(res, 404, 'Not Found')
      return
    }
    sendBytes(res, 200, bytes, m.contentType, { 'x-arweave-id': id, 'cache-control': 'public, max-age=2592000, immutable' })
  }
  router.get('/raw/{id}', (req, res) => data(req.params.id as string, res))
  router.get('/{id}', (req, res) => data(req.params.id as string, res))
  router.post('/__devnet/mine', (_req, res) => sendJson(res, 200, store.mineBlock()))

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
