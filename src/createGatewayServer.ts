import type { Server } from 'node:http'
import type { Express } from 'express'
import type { GatewayConfig } from './config/loadConfig.js'
import { createExpressServer } from './shared/http/createExpressServer.js'

/**
 * The gateway's HTTP server, as `npm start` and `npm run serve` run it: the request limits of `config.http` on the
 * services' server (createExpressServer: Express's prototypes, 65 s keep-alive). The tests that start a gateway in
 * process use it too, so that what they meet (timeouts, header limits) is what a client of the deployed gateway meets.
 */
export function createGatewayServer(app: Express, http: GatewayConfig['http']): Server {
  const server = createExpressServer(app, {
    maxHeaderSize: http.maxHeaderBytes,
    headersTimeout: http.headersTimeoutMs,
    requestTimeout: http.requestTimeoutMs,
  })
  server.maxHeadersCount = http.maxHeadersCount
  return server
}
