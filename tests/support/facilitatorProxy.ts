import { once } from 'node:events'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * What the next `/settle` meets on its way (each is used once):
 * - `beforeSettle`: runs before the request is passed on (the payer moves its money away between the
 *   verification and the settlement, on the real chain);
 * - `reportPending`: the real facilitator settles, and the gateway is told what x402's facilitator answers
 *   when its wait for the receipt timed out — `success: false`, `settlement_pending`, the broadcast hash;
 * - `dropAnswer`: the real facilitator settles, and the connection is cut before its answer reaches the
 *   gateway (an outcome the gateway cannot know).
 */
export type SettleFault = { beforeSettle?: () => Promise<void>; reportPending?: boolean; dropAnswer?: boolean }

export type FacilitatorProxy = {
  url: string
  /** Requests passed on, by path (`/verify`, `/settle`, `/supported`). */
  count: (path: string) => number
  /** The fault the next `/settle` meets. */
  next: (fault: SettleFault) => void
  close: () => Promise<void>
}

const body = async (req: IncomingMessage) => {
  const parts: Buffer[] = []
  for await (const p of req) parts.push(p as Buffer)
  return Buffer.concat(parts)
}

/**
 * A pass-through in front of the devnet facilitator (the real one, on the real chain), which injects the
 * faults of `SettleFault` into one settlement at a time — the failures a settlement meets in production.
 */
export async function startFacilitatorProxy(target: string): Promise<FacilitatorProxy> {
  const counts = new Map<string, number>()
  let fault: SettleFault | undefined
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    counts.set(path, (counts.get(path) ?? 0) + 1)
    const payload = await body(req)
    const now = path === '/settle' ? fault : undefined
    if (now) fault = undefined
    await now?.beforeSettle?.()
    const forwarded = await fetch(`${target}${path}`, {
      method: req.method,
      headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
      ...(req.method === 'GET' ? {} : { body: payload }),
    })
    let text = await forwarded.text()
    if (now?.dropAnswer) {
      req.socket.destroy()
      return
    }
    if (now?.reportPending) {
      const settled = JSON.parse(text) as { success: boolean; transaction: string }
      if (settled.success) text = JSON.stringify({ ...settled, success: false, errorReason: 'settlement_pending', errorMessage: 'timed out while waiting for the transaction receipt' })
    }
    res.writeHead(forwarded.status, { 'content-type': 'application/json' })
    res.end(text)
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (path) => counts.get(path) ?? 0,
    next: (f) => {
      fault = f
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}
