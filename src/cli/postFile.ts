/**
 * POSTs a file as `multipart/form-data` (one `file` part), streamed from disk with progress (sendFile.ts).
 */
import { randomBytes } from 'node:crypto'
import { basename } from 'node:path'
import { sendFile, type SendFileParams, type SendFileResult } from './sendFile.js'

export async function postFile(params: Omit<SendFileParams, 'before' | 'after'>): Promise<SendFileResult> {
  const boundary = `pay2store-${randomBytes(12).toString('hex')}`
  const name = basename(params.path).replace(/["\r\n]/g, '_')
  return sendFile({
    ...params,
    headers: { ...params.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    before: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    after: Buffer.from(`\r\n--${boundary}--\r\n`),
  })
}
