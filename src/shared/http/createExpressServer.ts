import { createServer, IncomingMessage, type Server, type ServerOptions, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Express } from 'express'

/**
 * How long an idle keep-alive connection is kept (both services): longer than the 60 s that load balancers commonly
 * allow an idle connection, so that the balancer, not the server, closes it; with Node's 5 s default a client reusing
 * a pooled connection races the server closing it and loses ("other side closed"). Node also arms this timeout as
 * soon as an answer is sent, while a body drained after an early answer may still be arriving: the drain's own
 * deadline (30 s, boundUnreadBody.ts) has to be the shorter one. The tests that start a service in process use the
 * same server: on Express's default one (a 5 s keep-alive timeout armed as soon as an answer is sent) a drained
 * upload that paused 5 s was cut.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000

/**
 * The HTTP server for an Express app, like `http.createServer(options, app)`, except that every request and
 * response object is created with the app's own prototypes (`app.request`, `app.response`).
 *
 * Why: Express's `app.handle` calls `Object.setPrototypeOf(req, app.request)` and the same for `res` on every
 * request, which makes V8 change each object's hidden class (map) after it was built. Measured with
 * `--trace-gc-nvp` (docs/performance.md, "What the figures depend on"): with that call, about a quarter of what a request allocates
 * survives into the old generation (7 KB per request for bare Express, 8.6 KB for the gateway's gated route;
 * a plain node:http server with the same two `setPrototypeOf` calls does the same, without them nearly
 * nothing), so mark-compacts follow every few thousand requests and the heap swings by tens of MiB. When the
 * objects already have those prototypes, V8 returns early from `setPrototypeOf` and nothing changes; Express
 * behaves exactly as before (same prototype chain, same `req.app`, `res.locals`, getters and methods).
 * Idle connections are kept `KEEP_ALIVE_TIMEOUT_MS`.
 */
export function createExpressServer(app: Express, options: ServerOptions = {}): Server {
  // Node's request and response constructors are plain functions (`IncomingMessage.call(this, socket)` is how
  // Node's own subclasses initialise), so a constructor with another `prototype` builds the same objects.
  function AppRequest(this: IncomingMessage, socket: Socket) {
    IncomingMessage.call(this, socket)
  }
  AppRequest.prototype = app.request
  function AppResponse(this: ServerResponse, req: IncomingMessage, responseOptions?: unknown) {
    ;(ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: unknown) => void).call(this, req, responseOptions)
  }
  AppResponse.prototype = app.response
  const server = createServer(
    { ...options, IncomingMessage: AppRequest as unknown as typeof IncomingMessage, ServerResponse: AppResponse as unknown as typeof ServerResponse },
    app,
  )
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  return server
}
