import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

export type UnreadBodyBounds = {
  /** Unread bytes still drained (connection kept) when the request declares its length. */
  drainMaxBytes: number
  /** How long a connection closed on an unread body keeps discarding what the client still sends. */
  lingerMs: number
}

/** How long a drained remainder may take to arrive. */
const DRAIN_DEADLINE_MS = 30_000

type EarlyRequest = Pick<IncomingMessage, 'headers' | 'complete' | 'readableEnded' | 'resume' | 'once'> & {
  socket?: Socket
  /** Express sets it; the bare servers of the tests and benches set it too. */
  res?: Pick<ServerResponse, 'headersSent' | 'setHeader'>
}

/**
 * Every request gets an HTTP answer (paid storage; the model server's bounded uploads
 * too): prepares a request that is about to be answered
 * before its body was read (a refused payment header, a limit, a slow sender).
 *
 * - A declared remainder up to `drainMaxBytes` is drained: the connection stays usable and the client, still
 *   writing, reads the answer.
 * - Anything larger, a chunked body or a slow sender (`cut`), is not read to its end: the answer carries
 *   `Connection: close`, and once it is flushed the connection is closed *lingering*. Node's own close
 *   (`destroySoon`) destroys the socket as soon as the answer is written; bytes the client is still sending
 *   then meet a closed socket, the kernel answers RST, and an RST can make the client's TCP stack drop our
 *   answer before the client has read it — `fetch failed`, no status. Lingering, the server sends FIN after
 *   the answer and keeps discarding what arrives for `lingerMs` (or until the client stops), then closes.
 *
 * `startBytes`: `socket.bytesRead` when the request's body started (what was read of it since counts).
 */
export function boundUnreadBody(req: EarlyRequest, startBytes: number, bounds: UnreadBodyBounds, { cut = false }: { cut?: boolean } = {}): void {
  if (req.complete || req.readableEnded) return
  const socket = req.socket
  const declared = Number(req.headers['content-length'])
  const read = socket ? socket.bytesRead - startBytes : 0
  const remaining = Number.isFinite(declared) ? declared - read : Infinity
  // discard what comes (Node also does it once the answer is sent; doing it now lets the client keep writing)
  req.resume()
  if (!cut && remaining <= bounds.drainMaxBytes) {
    // bounded in time too: a remainder still not sent after the deadline is not waited for (the answer has
    // long been read by then); without it only the server's request timeout (15 min) would end the wait
    if (socket) {
      const deadline = setTimeout(() => {
        if (!req.complete) socket.destroy()
      }, Math.max(bounds.lingerMs, DRAIN_DEADLINE_MS))
      deadline.unref()
      req.once('end', () => clearTimeout(deadline))
      socket.once('close', () => clearTimeout(deadline))
    }
    return
  }
  if (!socket || !req.res || req.res.headersSent) return
  req.res.setHeader('Connection', 'close')
  lingerOnClose(socket, bounds.lingerMs, Math.max(bounds.drainMaxBytes, 64 * 1024))
}

/** Replaces this socket's `destroySoon` (what Node calls after a `Connection: close` answer) with a lingering close. */
function lingerOnClose(socket: Socket, lingerMs: number, lingerBytes: number): void {
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end()
    const limit = this.bytesRead + lingerBytes
    const close = () => {
      clearTimeout(timer)
      this.off('data', onData)
      this.destroy()
    }
    const onData = () => {
      if (this.bytesRead > limit) close()
    }
    const timer = setTimeout(close, lingerMs)
    timer.unref()
    this.on('data', onData)
    this.once('end', close)
    this.once('close', () => clearTimeout(timer))
  }
}
