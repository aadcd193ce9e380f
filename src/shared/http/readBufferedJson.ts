import type { IncomingMessage } from 'node:http'

/** Larger bodies go through body-parser (they may still be arriving; its limit and stream handling apply). */
const MAX_BUFFERED = 64 * 1024

/**
 * A small JSON body that has fully arrived already, read at once: the same value (or the same refusal) as
 * body-parser's strict `json()`, without its stream machinery (raw-body listeners, an iconv decoder, several
 * ticks). A short request's body comes in the packets of its headers and is buffered while the session is
 * looked up, so this is the usual case of a cost call. `undefined`: not that case — use the parser.
 * `limit` is the parser's limit in bytes (a body over it must get the parser's 413).
 */
export function readBufferedJson(req: IncomingMessage, limit: number): { body: unknown } | { invalid: true } | undefined {
  const headers = req.headers
  const length = headers['content-length']
  if (length === undefined || headers['transfer-encoding'] !== undefined || headers['content-encoding'] !== undefined) return undefined
  // A charset (or any parameter) is left to the parser: it decodes or refuses it.
  if (headers['content-type']?.includes(';') !== false) return undefined
  // Nothing read yet (body-parser also skips a request whose socket is no longer readable)…
  if (req.readableDidRead || req.readableFlowing !== null || !req.socket?.readable) return undefined
  const size = Number(length)
  // …and every byte of it buffered: with Content-Length framing the parser never buffers more than the body
  // (`req.complete` only turns true a little later, once the parser reports the end of the message).
  if (!(size <= MAX_BUFFERED && size <= limit) || req.readableLength !== size) return undefined
  const chunk = req.read() as Buffer | null
  // iconv's UTF-8 decoder (body-parser's) drops a byte order mark.
  let text = chunk === null ? '' : chunk.toString('utf8')
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  if (text.length === 0) return { body: {} }
  // Strict: an object or an array, as body-parser's `strict` (the default) requires.
  const first = /^[\x20\x09\x0a\x0d]*(.)/s.exec(text)?.[1]
  if (first !== '{' && first !== '[') return { invalid: true }
  try {
    return { body: JSON.parse(text) }
  } catch {
    return { invalid: true }
  }
}
