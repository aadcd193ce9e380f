/**
 * POSTs a file's raw bytes (`POST /api/blobs/:digest` of a model server, as Ollama's own client uploads a
 * GGUF) streamed from disk, reporting bytes sent. node:http rather than fetch: fetch cannot report how much
 * of a streamed body has been written, and a model file is never held in memory.
 */
import { createReadStream } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { unreachable, type Service } from './CliError.js'

export async function postBlob(params: {
  url: string
  path: string
  size: number
  service?: Service
  onProgress?: (sent: number, total: number) => void
}): Promise<{ status: number; body: string }> {
  const url = new URL(params.url)
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'content-length': String(params.size) } })
    req.on('error', (error) => reject(unreachable(`${url.origin}`, { cause: error }, params.service)))
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    let sent = 0
    const file = createReadStream(params.path, { highWaterMark: 1024 * 1024 })
    file.on('data', (chunk) => {
      if (!req.write(chunk)) file.pause()
      sent += chunk.length
      params.onProgress?.(sent, params.size)
    })
    req.on('drain', () => file.resume())
    file.on('error', (error) => req.destroy(error))
    file.on('end', () => req.end())
  })
}
