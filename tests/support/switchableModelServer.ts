import { listen } from './listen.js'

export type SwitchableModelServer = {
  url: string
  /** Off: every request is answered 503 (what a gateway sees of a model server that is down behind a proxy). */
  up: boolean
  /** The `Authorization` header of each request. */
  authorizations: (string | undefined)[]
  close: () => Promise<void>
}

/**
 * The part of a model server a gateway's readiness reads (`GET /api/tags`, an empty model list), which a test turns
 * off and on. With `apiKey`, a request without `Authorization: Bearer <apiKey>` is answered 401.
 */
export async function startSwitchableModelServer(options: { apiKey?: string } = {}): Promise<SwitchableModelServer> {
  const server = await listen((req, res) => {
    state.authorizations.push(req.headers.authorization)
    if (!state.up) return void res.writeHead(503).end()
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}')
    if (req.url === '/api/tags') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"models":[]}')
    res.writeHead(404).end()
  })
  const state: SwitchableModelServer = { url: server.url, up: true, authorizations: [], close: server.close }
  return state
}
