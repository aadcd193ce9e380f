import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { encodeBase64Json, HEADER_PAYMENT_SIGNATURE } from '../x402/index.js'
import type { IntakeRequest } from './intake/StoreIntake.js'

export type BytesUpload = {
  bytes: Uint8Array
  mimeType: string
  /** The x402 `PaymentPayload` as sent (MCP `_meta["x402/payment"]`); absent: ask for the requirements. */
  payment?: unknown
  /** The `App-Name` tag (what `X-SVC-Tag-App` says on `/store`). */
  appName?: string | undefined
}

/**
 * Bytes already in memory (a file an MCP client sent as base64, or one fetched from an allowed origin) as the
 * request `POST /store` receives: a one-part multipart body with the payment in `PAYMENT-SIGNATURE`. So every
 * check of the HTTP route — intake, pre-check, amount, payment identifier, claim, settlement, crash
 * recovery — runs unchanged for it; there is no second path where money moves.
 */
export function bytesUploadRequest(upload: BytesUpload): IntakeRequest {
  const boundary = `----mcp${randomBytes(12).toString('hex')}`
  const mimeType = /^[\x21-\x7E]+\/[\x21-\x7E]+$/.test(upload.mimeType) ? upload.mimeType : 'application/octet-stream'
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\nContent-Type: ${mimeType}\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const headers: Record<string, string> = {
    'content-type': `multipart/form-data; boundary=${boundary}`,
    'content-length': String(head.length + upload.bytes.length + tail.length),
  }
  if (upload.payment !== undefined) headers[HEADER_PAYMENT_SIGNATURE.toLowerCase()] = encodeBase64Json(upload.payment)
  if (upload.appName !== undefined) headers['x-svc-tag-app'] = upload.appName
  return Object.assign(Readable.from([head, Buffer.from(upload.bytes), tail], { objectMode: false }), { headers })
}
