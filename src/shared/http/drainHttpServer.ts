import type { Server } from 'node:http'

export type DrainHttpServerOptions = {
  /** Keep accepting for this long first: a balancer sends requests until its next check sees the replica not ready. */
  delayMs: number
  /** From the call: connections still open then are cut. */
  deadlineMs: number
  /** How often idle keep-alive connections are closed while requests finish (default 100 ms). */
  pollMs?: number
  onDeadline?: (openConnections: boolean) => void
}

/**
 * Stops an HTTP server without cutting a request that has started (a rolling restart; issue 28): every answer
 * from now on says `Connection: close`, so no client or balancer sends another request on a connection about
 * to close; for `delayMs` everything else goes on as before (the balancer is still sending); then the server
 * stops accepting and idle connections are closed, each as its last answer ends;
 * whatever is still open at `deadlineMs` (a slow upload, a long stream) is cut. Resolves when the server is
 * closed. Built on Node's own `closeIdleConnections` / `closeAllConnections` (Node ≥ 18.2), which is all a
 * graceful-stop library adds on top of `server.close()` today.
 */
export async function drainHttpServer(server: Server, { delayMs, deadlineMs, pollMs = 100, onDeadline }: DrainHttpServerOptions): Promise<void> {
  const started = Date.now()
  // answers not yet begun close their connection after them (Node sends `Connection: close`)
  const closeAfter = (_req: unknown, res: { shouldKeepAlive: boolean }) => {
    res.shouldKeepAlive = false
  }
  server.prependListener('request', closeAfter)
  let idleCloser: NodeJS.Timeout | undefined
  try {
    // Idle connections stay open through the delay: a client (a balancer's pool) may be sending a request on
    // one right now, and closing it under that request is an error the client sees. They close after.
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs))
    const closed = new Promise<void>((resolve) => server.close(() => resolve())) // closes the idle ones too
    idleCloser = setInterval(() => server.closeIdleConnections(), pollMs)
    const left = Math.max(0, deadlineMs - (Date.now() - started))
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), left)
    })
    if ((await Promise.race([closed, deadline])) === 'deadline') {
      onDeadline?.(true)
      server.closeAllConnections()
      await closed
    }
    clearTimeout(timer)
  } finally {
    if (idleCloser) clearInterval(idleCloser)
    server.off('request', closeAfter)
  }
}
