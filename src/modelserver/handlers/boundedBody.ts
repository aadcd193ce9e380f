import type { IncomingMessage } from 'node:http'
import { PassThrough, type Readable } from 'node:stream'
import { boundUnreadBody } from '../../shared/http/boundUnreadBody.js'

/** How long a connection cut on an oversized body keeps discarding what the client still sends. */
const LINGER_MS = 2_000

/**
 * A request body handed to a store that may refuse it part-way (a blob past its bound). The store's pipeline
 * destroys its source on error, and destroying the request would reset the connection before the client reads
 * the 413: it gets a copy instead, and `refuse()` answers on a lingering close (`boundUnreadBody`). A client that
 * leaves mid-body fails the copy.
 */
export function boundedBody(req: IncomingMessage): { body: Readable; refuse: () => void } {
  const startBytes = req.socket?.bytesRead ?? 0
  const body = req.pipe(new PassThrough())
  // `pipe` does not pass on a client that left mid-body: the copy would wait forever, and the store's pipeline with
  // it, holding its temporary file open. Its end fails the copy instead, and the store removes what it wrote.
  req.once('close', () => {
    if (!req.complete) body.destroy(new Error('the client closed the connection before the body ended'))
  })
  return {
    body,
    refuse: () => {
      req.unpipe(body)
      boundUnreadBody(req as IncomingMessage & { res?: never }, startBytes, { drainMaxBytes: 0, lingerMs: LINGER_MS }, { cut: true })
    },
  }
}
