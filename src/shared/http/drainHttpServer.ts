import type { IncomingMessage, Server } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'

export type DrainHttpServerOptions = {
  /** Keep accepting for this long first: a balancer sends requests until its next check sees the replica not ready. */
  delayMs: number
  /**
   * Then keep accepting until no request has arrived for this long (0: stop at `delayMs`): a balancer slower
   * than expected (its checks answered late on a loaded machine) is still sending, and a request it sends as
   * the server stops is cut. Never past `deadlineMs`.
   */
  quietMs?: number
  /** Requests that do not count as traffic for `quietMs`: the balancer's own checks, which go on after it stops sending. */
  isProbe?: (req: IncomingMessage) => boolean
  /** From the call: connections still open then are cut. */
  deadlineMs: number
  /** How often idle keep-alive connections are closed while requests finish (default 100 ms). */
  pollMs?: number
  onDeadline?: (openConnections: boolean) => void
  /** Requests were still arriving at the deadline (with `quietMs`): the balancer never stopped sending. */
  onNeverQuiet?: () => void
}

/**
 * Stops an HTTP server without cutting a request that has started (a rolling restart): every answer
 * from now on says `Connection: close`, so no client or balancer sends another request on a connection about
 * to close; for `delayMs` everything else goes on as before (the balancer is still sending); then the server
 * stops accepting and idle connections are closed, each as its last answer ends;
 * whatever is still open at `deadlineMs` (a slow upload, a long stream) is cut. With `quietMs` the stop waits,
 * after `delayMs`, for the requests to stop coming: behind HAProxy whose checks came late, requests sent a few ms
 * before a fixed stop reached a closing listener and were lost (docs/reliability.md). Resolves when the server is
 * closed. Built on Node's own `closeIdleConnections` / `closeAllConnections` (Node ≥ 18.2), which is all a
 * graceful-stop library adds on top of `server.close()` today.
 */
export async function drainHttpServer(
  server: Server,
  { delayMs, quietMs = 0, isProbe, deadlineMs, pollMs = 100, onDeadline, onNeverQuiet }: DrainHttpServerOptions,
): Promise<void> {
  const started = Date.now()
  let lastRequestAt = started
  // answers not yet begun close their connection after them (Node sends `Connection: close`)
  const closeAfter = (req: IncomingMessage, res: { shouldKeepAlive: boolean }) => {
    res.shouldKeepAlive = false
    if (!isProbe?.(req)) lastRequestAt = Date.now()
  }
  server.prependListener('request', closeAfter)
  let idleCloser: NodeJS.Timeout | undefined
  try {
    // Idle connections stay open through the delay: a client (a balancer's pool) may be sending a request on
    // one right now, and closing it under that request is an error the client sees. They close after.
    if (delayMs > 0) await sleep(delayMs)
    if (quietMs > 0) {
      const deadlineAt = started + deadlineMs
      while (Date.now() - lastRequestAt < quietMs && Date.now() < deadlineAt) await sleep(Math.min(lastRequestAt + quietMs, deadlineAt) - Date.now())
      if (Date.now() - lastRequestAt < quietMs) onNeverQuiet?.()
    }
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
