/**
 * POSTs a file as `multipart/form-data` (one `file` part) streamed from disk, reporting bytes sent, so a
 * large upload shows progress and is never held in memory. node:http rather than fetch: fetch cannot
 * report how much of a streamed body has been written.
 */
import { createReadStream } from 'node:fs'
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { basename } from 'node:path'
import { randomBytes } from 'node:crypto'
import { unreachable, type Service } from './CliError.js'

export type PostFileResult = { status: number; headers: IncomingHttpHeaders; body: string }

export async function postFile(params: {
  url: string
  path: string
  size: number
  headers?: Record<string, string>
  onProgress?: (sent: number, total: number) => void
  /** Who answers at `url`, for the hint when it cannot be reached. */
  service?: Service
}): Promise<PostFileResult> {
  const boundary = `pay2store-${randomBytes(12).toString('hex')}`
  const name = basename(params.path).replace(/["\r\n]/g, '_')
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const total = head.length + params.size + tail.length
  const url = new URL(params.url)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise<PostFileResult>((resolve, reject) => {
    const req = send(url, {
      method: 'POST',
      headers: { ...params.headers, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(total) },
    })
    req.on('error', (error) => reject(unreachable(params.url, { cause: error }, params.service)))
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    let sent = 0
    const progress = (n: number) => {
      sent += n
      params.onProgress?.(sent, total)
    }
    req.write(head)
    progress(head.length)
    const file = createReadStream(params.path, { highWaterMark: 256 * 1024 })
    file.on('data', (chunk) => {
      if (!req.write(chunk)) file.pause()
      progress(chunk.length)
    })
    req.on('drain', () => file.resume())
    file.on('error', (error) => req.destroy(error))
    file.on('end', () => {
      req.end(tail)
      progress(tail.length)
    })
  })
}
