/**
 * Sends a file as a request body streamed from disk (optionally framed by bytes before and after it, as a
 * multipart body is), reporting the bytes sent, so a large upload shows progress and is never held in
 * memory. node:http rather than fetch: fetch cannot report how much of a streamed body has been written.
 *
 * Progress is what reaches a connected socket: nothing is reported before the connection is made, so a
 * server that cannot be reached draws no bar. Once the request has an outcome — an error, or an answer,
 * which a server may give before the whole body is sent (a 413, say) — the file is no longer read and no
 * progress is reported: a report after the outcome would draw a bar after its command ended.
 *
 * A failure before the connection is made is `unreachable` (the server heard nothing); one after the request
 * started (a reset, a hang-up, an answer cut off) is `RequestLostError`: the server may have read the request
 * and acted on it — for a paid upload, taken the payment.
 */
import { createReadStream, type ReadStream } from 'node:fs'
import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { CliError, EXIT, fileReadFailure, requestLost, unreachable, type Service } from './CliError.js'

export type SendFileResult = { status: number; headers: IncomingHttpHeaders; body: string }

export type SendFileParams = {
  url: string
  path: string
  /** The file's size in bytes. */
  size: number
  headers?: Record<string, string>
  /** Bytes sent before the file's (a multipart part's head). */
  before?: Buffer
  /** Bytes sent after the file's (the closing boundary). */
  after?: Buffer
  /** Who answers at `url`, for the hint when it cannot be reached. */
  service?: Service
  onProgress?: (sent: number, total: number) => void
  /** Bytes read from the file at a time. */
  chunkBytes?: number
  /** Ends the request when no byte moves either way on its connection for this long (`idleTimeout`); 0 or unset: never. */
  idleMs?: number
}

/**
 * Bounds a request by inactivity: a socket timeout, which any byte read or written restarts, destroys it with a
 * reason in words — a failure before the request started is then `unreachable`, after it `RequestLostError`.
 */
export function idleTimeout(req: ClientRequest, idleMs: number | undefined): void {
  if (!idleMs) return
  req.setTimeout(idleMs, () => req.destroy(new Error(`nothing moved either way for ${idleMs / 1000} s; --idle-timeout`)))
}

export async function sendFile(params: SendFileParams): Promise<SendFileResult> {
  const before = params.before ?? Buffer.alloc(0)
  const after = params.after ?? Buffer.alloc(0)
  const total = before.length + params.size + after.length
  const url = new URL(params.url)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise<SendFileResult>((resolve, reject) => {
    const req = send(url, { method: 'POST', headers: { ...params.headers, 'content-length': String(total) } })
    idleTimeout(req, params.idleMs)
    let settled = false
    let started = false
    let bodySent = false
    let file: ReadStream | undefined
    const settle = () => {
      settled = true
      file?.destroy()
    }
    let sent = 0
    const progress = (n: number) => {
      sent += n
      if (!settled) params.onProgress?.(sent, total)
    }
    req.on('error', (error) => {
      if (settled) return
      settle()
      reject(started ? requestLost(params.url, { cause: error }, params.service) : unreachable(params.url, { cause: error }, params.service))
    })
    req.on('response', (res) => {
      settle()
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        // answered before the body was all sent: the request is over, the rest is not sent
        if (!bodySent) req.destroy()
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') })
      })
      res.on('error', (error) => reject(requestLost(params.url, { cause: error }, params.service)))
    })
    const start = () => {
      if (settled) return
      started = true
      req.write(before)
      progress(before.length)
      file = createReadStream(params.path, { highWaterMark: params.chunkBytes ?? 256 * 1024 })
      file.on('data', (chunk) => {
        if (settled) return
        if (!req.write(chunk)) file?.pause()
        progress(chunk.length)
      })
      req.on('drain', () => file?.resume())
      file.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return
        settle()
        req.destroy()
        reject(new CliError('bad_file', `cannot read ${params.path}: ${fileReadFailure(error)}`, EXIT.usage))
      })
      file.on('end', () => {
        if (settled) return
        bodySent = true
        req.end(after)
        progress(after.length)
      })
    }
    req.on('socket', (socket) => {
      if (socket.connecting) socket.once('connect', start)
      else start()
    })
  })
}
